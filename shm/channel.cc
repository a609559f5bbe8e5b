#include "shm/channel.h"

#include <sched.h>
#include <signal.h>

#include <algorithm>
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

ShmChannel::ShmChannel(ShmArena& arena, int rank, long pid, bool crowded)
    : arena_(arena),
      rank_(rank),
      size_(arena.ranks()),
      bytes_(arena.bufferBytes()),
      crowded_(crowded) {
  for (int q = 0; q < size_; ++q)
    slots_.push_back({{arena_.beside(q, 0), arena_.beside(q, 1)},
                      {arena_.buffer(q, 0), arena_.buffer(q, 1)},
                      {&arena_.stamp(q, 0), &arena_.stamp(q, 1)}});
  arena_.control(rank_).pid.store(pid, std::memory_order_relaxed);
  // A channel made again on this arena goes on from the last round this rank published.
  round_ = std::max(slots_[rank_].stamp[0]->load(std::memory_order_relaxed),
                    slots_[rank_].stamp[1]->load(std::memory_order_relaxed));
}

Status ShmChannel::sync(int from) {
  ++round_;
  slots_[rank_].stamp[round_ % 2]->store(round_, std::memory_order_release);
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
  // The others only (this rank's own stamp holds round_, which it published itself), each rank
  // starting from the next one: with every rank polling in rank order, rank 0 read its own stamp
  // first and rank 1 last, and a two-rank round after a barrier took 0.7 us where it takes 0.4
  // with the same order on both sides (docs/PERFORMANCE.md, "The order of the polls").
  const int others = from == kAll ? size_ - 1 : (from == rank_ ? 0 : 1);
  const bool inFiber = Fiber::inside();
  for (int k = 1; k <= others; ++k) {
    const int q = from == kAll ? (rank_ + k) % size_ : from;
    // Rank q has published `round` when the stamp of that round's buffer says so (or a later
    // round of the same buffer): rounds are published in order.
    std::atomic<std::uint64_t>& stamp = *slots_[q].stamp[round % 2];
    while (stamp.load(std::memory_order_acquire) < round) {
      if (!crowded_ && ++spins < kSpins && (!inFiber || eagerWait())) {
        cpuRelax();
        continue;
      }
      // common/progress.h: a fiber hands the thread back; elsewhere the idle hook runs, and the
      // core goes away only where ranks outnumber cores.
      idle(crowded_);
      spins = 0;  // (a fiber resumed by a wait for its operation may poll a while again)
      // The clock (tens of ns) only now and then: a fiber comes back here at every pass.
      if (++polls % kPollsPerClock != 0) continue;
      const Clock::time_point now = Clock::now();
      if (lastCheck == Clock::time_point{}) lastCheck = now;
      if (now - lastCheck < std::chrono::milliseconds(50)) continue;
      lastCheck = now;
      const long pid = arena_.control(q).pid.load(std::memory_order_relaxed);
      if (!alive(pid)) {
        OVERPASS_ERROR("shared memory: node rank %d (process %ld) has exited", q, pid);
        return Status::kTransportError;
      }
    }
  }
  return Status::kOk;
}

}  // namespace overpass
