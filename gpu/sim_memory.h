// The simulated device backend (gpu/sim_device.h): its two copy lanes are worker threads that
// copy through the alias window, in order, each copy optionally slowed down (a stand-in for
// PCIe). Tests read a trace of the copies to check the scheduling of gpu/staging_pipeline.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "gpu/memory.h"

namespace overpass {

DeviceMemory& simulatedDeviceMemory();

// One copy as the simulated lanes ran it.
struct SimCopyRecord {
  int lane;
  std::uint64_t seq;
  const void* dst;
  std::size_t bytes;
  std::chrono::steady_clock::time_point start, end;
};
// Every copy from now on takes at least `delay`; and the trace of copies done since the last call.
void simSetCopyDelay(std::chrono::microseconds delay);
std::vector<SimCopyRecord> simTakeTrace();

}  // namespace overpass
