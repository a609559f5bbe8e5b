#include "shm/channel.h"

#include <sched.h>
#include <signal.h>

#include <cerrno>
#include <chrono>

#include "common/fiber.h"
#include "common/log.h"
#include "common/progress.h"

namespace overpass {
namespace {

using Clock = std::chrono::steady_clock;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

bool alive(long pid) {
  return pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

ShmChannel::ShmChannel(ShmArena& arena, int rank, long pid, int spins)
    : arena_(arena), rank_(rank), size_(arena.ranks()), bytes_(arena.bufferBytes()), spins_(spins) {
  arena_.control(rank_).pid.store(pid, std::memory_order_relaxed);
  round_ = arena_.control(rank_).round.load(std::memory_order_relaxed);
}

Status ShmChannel::sync(int from) {
  ++round_;
  arena_.control(rank_).round.store(round_, std::memory_order_release);
  const Status s = waitFor(from, round_);
  noteProgress();
  return s;
}

// Polls between two looks at the clock for the liveness check.
constexpr unsigned kPollsPerClock = 64;

Status ShmChannel::waitFor(int from, std::uint64_t round) {
  int spins = 0;
  unsigned polls = 0;
  Clock::time_point lastCheck{};
  const int first = from == kAll ? 0 : from, last = from == kAll ? size_ - 1 : from;
  const bool inFiber = Fiber::inside();
  for (int q = first; q <= last; ++q) {
    ShmArena::Control& c = arena_.control(q);
    while (c.round.load(std::memory_order_acquire) < round) {
      if (spins < spins_ && (!inFiber || eagerWait())) {
        ++spins;
        cpuRelax();
        continue;
      }
      idle(true);  // common/progress.h: a fiber yields at once
      // Resumed: where by a wait for this operation, it may poll a while again.
      if (inFiber) spins = 0;
      // The clock (tens of ns) only now and then: a fiber comes back here at every pass.
      if (++polls % kPollsPerClock != 0) continue;
      const Clock::time_point now = Clock::now();
      if (lastCheck == Clock::time_point{}) lastCheck = now;
      if (now - lastCheck < std::chrono::milliseconds(50)) continue;
      lastCheck = now;
      const long pid = c.pid.load(std::memory_order_relaxed);
      if (!alive(pid)) {
        OVERPASS_ERROR("shared memory: node rank %d (process %ld) has exited", q, pid);
        return Status::kTransportError;
      }
    }
  }
  return Status::kOk;
}

}  // namespace overpass
