#include "gpu/sim_memory.h"

#include <cstring>

#include "gpu/sim_device.h"

namespace overpass {
namespace {

class SimulatedDeviceMemory final : public DeviceMemory {
 public:
  std::string_view name() const override { return "simulated device"; }
  PointerInfo classify(const void* p) override {
    PointerInfo info;
    if (!overpass_sim_is_device(p)) return info;
    info.kind = MemoryKind::kDevice;
    info.device = 0;
    info.ipcExportable = true;
    return info;
  }
  Status toHost(void* host, const void* device, std::size_t bytes) override {
    if (bytes) std::memcpy(host, overpass_sim_alias(device), bytes);
    return Status::kOk;
  }
  Status fromHost(void* device, const void* host, std::size_t bytes) override {
    if (bytes) std::memcpy(overpass_sim_alias(device), host, bytes);
    return Status::kOk;
  }
};

}  // namespace

DeviceMemory& simulatedDeviceMemory() {
  static SimulatedDeviceMemory memory;
  return memory;
}

}  // namespace overpass
