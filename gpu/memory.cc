#include "gpu/memory.h"

#include <atomic>

#include "gpu/sim_memory.h"

namespace overpass {

#ifdef OVERPASS_HAVE_CUDA
void loadCudaDriver();             // gpu/cuda_memory.cc
DeviceMemory* cudaDeviceMemory();  // null until the application has initialised CUDA
#endif

namespace {
std::atomic<bool> gSimulated{false};
}  // namespace

std::string_view memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost:
      return "host";
    case MemoryKind::kManaged:
      return "managed";
    case MemoryKind::kDevice:
      return "device";
  }
  return "?";
}

void initDeviceMemory(bool simulated) {
  gSimulated.store(simulated, std::memory_order_relaxed);
#ifdef OVERPASS_HAVE_CUDA
  if (!simulated) loadCudaDriver();
#endif
}

DeviceMemory* deviceMemory() {
  if (gSimulated.load(std::memory_order_relaxed)) return &simulatedDeviceMemory();
#ifdef OVERPASS_HAVE_CUDA
  return cudaDeviceMemory();
#else
  return nullptr;
#endif
}

}  // namespace overpass
