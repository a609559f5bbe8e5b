// Progress notes for the watchdog (shim/watchdog.h): code that waits on peers (the transports,
// the shared-memory channel) calls noteProgress() whenever a wait completes, so that a long call
// that keeps moving is told apart from one that is stuck. The shim points the calling thread's
// counter at its watched call for the duration of the call; elsewhere a note costs one branch.
#pragma once

#include <atomic>
#include <cstdint>

namespace overpass {

namespace progress_detail {
inline thread_local std::atomic<std::uint64_t>* tCounter = nullptr;
}

// How many fruitless polls a transport's wait makes before it yields the core between polls:
// where ranks share cores (or kernel networking needs one), a spinning wait starves the very
// peer it waits for.
inline constexpr int kPollsBeforeYield = 256;

inline void noteProgress() {
  if (std::atomic<std::uint64_t>* c = progress_detail::tCounter)
    c->fetch_add(1, std::memory_order_relaxed);
}

}  // namespace overpass
