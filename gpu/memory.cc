#include "gpu/memory.h"

#include <atomic>
#include <cstring>

#include "gpu/sim_memory.h"

namespace overpass {

#ifdef OVERPASS_HAVE_CUDA
// gpu/cuda_memory.cc
void loadCudaDriver();
bool cudaDriverLoaded();
DeviceMemory* cudaDeviceMemory();  // null until the application has initialised CUDA
#endif

namespace device_detail {
std::atomic<bool> gPossible{false};
}  // namespace device_detail

namespace {
std::atomic<bool> gSimulated{false};

class HostMemory final : public DeviceMemory {
 public:
  std::string_view name() const override { return "host"; }
  PointerInfo classify(const void*) override { return {}; }
  Status startCopy(Lane, void* dst, const void* src, std::size_t bytes, Ticket* ticket) override {
    if (bytes) std::memcpy(dst, src, bytes);
    *ticket = {};
    return Status::kOk;
  }
  Status wait(const Ticket&) override { return Status::kOk; }
};
}  // namespace

bool deviceReducible(DataType type, ReduceOp op) {
  return op != ReduceOp::kUser && isValidReduction(type, op) && type != DataType::kLongDouble &&
         type != DataType::kLongDoubleInt;
}

DeviceMemory& hostMemory() {
  static HostMemory memory;
  return memory;
}

bool deviceMemoryPossible() {
  return device_detail::gPossible.load(std::memory_order_relaxed);
}

void initDeviceMemory(bool simulated) {
  gSimulated.store(simulated, std::memory_order_relaxed);
  bool possible = simulated;
#ifdef OVERPASS_HAVE_CUDA
  if (!simulated) {
    loadCudaDriver();
    possible = cudaDriverLoaded();
  }
#endif
  device_detail::gPossible.store(possible, std::memory_order_relaxed);
}

DeviceMemory* device_detail::currentBackend() {
  if (gSimulated.load(std::memory_order_relaxed)) return &simulatedDeviceMemory();
#ifdef OVERPASS_HAVE_CUDA
  return cudaDeviceMemory();
#else
  return nullptr;
#endif
}

}  // namespace overpass
