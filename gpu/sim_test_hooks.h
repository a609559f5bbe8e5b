// Test hooks of the simulated device (gpu/sim_memory.h): the tests slow its copies down and read
// the trace of the copies to check the scheduling of gpu/staging_pipeline.h. Not part of the
// library's interface: cmake/layers.txt names this header test-only, so only tests/ may include
// it (tests/check_layers.py); the library records no trace unless a test asked for one.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace overpass {

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
