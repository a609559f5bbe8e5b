#include "gpu/staging_pipeline.h"

#include <algorithm>
#include <vector>

namespace overpass {

Status runPipelined(DeviceMemory& memory, const void* in, bool inDevice, void* out, bool outDevice,
                    const PipelinePlan& plan, unsigned char* staging, const PipelineStep& step) {
  using Ticket = DeviceMemory::Ticket;
  const bool inPlace = in != nullptr && in == out;
  inDevice = in && inDevice;
  outDevice = out && outDevice;
  const int depth = std::max(plan.depth, 2);
  const std::size_t chunks = (plan.bytes + plan.chunk - 1) / plan.chunk;
  unsigned char* inSlots = staging;
  unsigned char* outSlots = inPlace ? staging : staging + plan.chunk * depth;
  std::vector<Ticket> up(depth), down(depth);  // the last copy through each slot
  auto offsetOf = [&](std::size_t k) { return k * plan.chunk; };
  auto sizeOf = [&](std::size_t k) { return std::min(plan.chunk, plan.bytes - offsetOf(k)); };
  auto startUp = [&](std::size_t k) {
    const int s = static_cast<int>(k % depth);
    if (inPlace) OVERPASS_CHECK(memory.wait(down[s]));  // the slot's last chunk is back down
    return memory.startCopy(DeviceMemory::kUp, inSlots + s * plan.chunk,
                            static_cast<const unsigned char*>(in) + offsetOf(k), sizeOf(k), &up[s]);
  };

  Status status = Status::kOk;
  if (inDevice && chunks > 0) status = startUp(0);
  for (std::size_t k = 0; k < chunks && status == Status::kOk; ++k) {
    const int s = static_cast<int>(k % depth);
    const std::size_t offset = offsetOf(k), bytes = sizeOf(k);
    const void* hostIn = nullptr;
    if (in) {
      hostIn = static_cast<const unsigned char*>(in) + offset;
      if (inDevice) {
        if ((status = memory.wait(up[s])) != Status::kOk) break;
        hostIn = inSlots + s * plan.chunk;
        if (k + 1 < chunks && (status = startUp(k + 1)) != Status::kOk) break;
      }
    }
    void* hostOut = nullptr;
    if (out) {
      hostOut = static_cast<unsigned char*>(out) + offset;
      if (outDevice) {
        if (!inPlace && (status = memory.wait(down[s])) != Status::kOk) break;
        hostOut = outSlots + s * plan.chunk;
      }
    }
    if ((status = step(offset, bytes, hostIn, hostOut)) != Status::kOk) break;
    if (outDevice)
      status = memory.startCopy(DeviceMemory::kDown, static_cast<unsigned char*>(out) + offset,
                                hostOut, bytes, &down[s]);
  }
  // Every copy started is finished before the slots can be reused or the call returns.
  for (int s = 0; s < depth; ++s) {
    const Status a = memory.wait(up[s]), b = memory.wait(down[s]);
    if (status == Status::kOk) status = a != Status::kOk ? a : b;
  }
  return status;
}

}  // namespace overpass
