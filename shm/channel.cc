#include "shm/channel.h"

#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

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

// Polls between two looks at the clock for the liveness check.
constexpr unsigned kPollsPerClock = 64;

// One wait's state, carried across the ranks it waits for in turn.
struct Patience {
  int spins = 0;
  unsigned polls = 0;
  Clock::time_point lastCheck{};
  bool inFiber = Fiber::inside();
};

// Polls `ready` until it holds, or until rank q of `arena` is found to have exited.
template <class Ready>
Status waitUntil(Patience& w, const ShmArena& arena, int q, bool crowded, Ready ready) {
  while (!ready()) {
    if (!crowded && ++w.spins < ShmChannel::kSpins && (!w.inFiber || eagerWait())) {
      cpuRelax();
      continue;
    }
    // common/progress.h: a fiber hands the thread back; elsewhere the idle hook runs, and the
    // core goes away only where ranks outnumber cores.
    idle(crowded);
    w.spins = 0;  // (a fiber resumed by a wait for its operation may poll a while again)
    // The clock (tens of ns) only now and then: a fiber comes back here at every pass.
    if (++w.polls % kPollsPerClock != 0) continue;
    const Clock::time_point now = Clock::now();
    if (w.lastCheck == Clock::time_point{}) w.lastCheck = now;
    if (now - w.lastCheck < std::chrono::milliseconds(50)) continue;
    w.lastCheck = now;
    const long pid = arena.control(q).pid.load(std::memory_order_relaxed);
    if (!alive(pid)) {
      OVERPASS_ERROR("shared memory: node rank %d (process %ld) has exited", q, pid);
      return Status::kTransportError;
    }
  }
  return Status::kOk;
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
  // A channel made again on this arena goes on from the last round this rank published, and from
  // the last posts it made and took.
  round_ = std::max(slots_[rank_].stamp[0]->load(std::memory_order_relaxed),
                    slots_[rank_].stamp[1]->load(std::memory_order_relaxed));
  if (!arena_.hasPosts()) return;
  posted_.assign(size_, 0);
  taken_.assign(size_, 0);
  seenTaken_.assign(size_, 0);
  for (int q = 0; q < size_; ++q) {
    for (std::size_t slot = 0; slot < ShmArena::kPostSlots; ++slot)
      posted_[q] =
          std::max(posted_[q], arena_.postStamp(rank_, q, slot).load(std::memory_order_relaxed));
    taken_[q] = arena_.postsTaken(q, rank_).load(std::memory_order_relaxed);
    seenTaken_[q] = arena_.postsTaken(rank_, q).load(std::memory_order_relaxed);
  }
}

Status ShmChannel::sync(int from) {
  ++round_;
  slots_[rank_].stamp[round_ % 2]->store(round_, std::memory_order_release);
  const Status s = waitFor(from, round_);
  noteProgress();
  return s;
}

Status ShmChannel::waitFor(int from, std::uint64_t round) {
  Patience w;
  // The others only (this rank's own stamp holds round_, which it published itself), each rank
  // starting from the next one: with every rank polling in rank order, rank 0 read its own stamp
  // first and rank 1 last, and a two-rank round after a barrier took 0.7 us where it takes 0.4
  // with the same order on both sides (docs/PERFORMANCE.md, "The order of the polls").
  const int others = from == kAll ? size_ - 1 : (from == rank_ ? 0 : 1);
  for (int k = 1; k <= others; ++k) {
    const int q = from == kAll ? (rank_ + k) % size_ : from;
    // Rank q has published `round` when the stamp of that round's buffer says so (or a later
    // round of the same buffer): rounds are published in order.
    std::atomic<std::uint64_t>& stamp = *slots_[q].stamp[round % 2];
    const Status s = waitUntil(w, arena_, q, crowded_,
                               [&] { return stamp.load(std::memory_order_acquire) >= round; });
    if (s != Status::kOk) return s;
  }
  return Status::kOk;
}

Status ShmChannel::post(int to, const void* data, std::size_t bytes) {
  const std::uint64_t n = posted_[to];  // posts made to `to` before this one
  // The slot is free once `to` has taken the post kPostSlots before this one; the count it keeps
  // is read again only where the last reading says the box is full.
  if (n - seenTaken_[to] >= ShmArena::kPostSlots) {
    std::atomic<std::uint64_t>& taken = arena_.postsTaken(rank_, to);
    Patience w;
    const Status s = waitUntil(w, arena_, to, crowded_, [&] {
      seenTaken_[to] = taken.load(std::memory_order_acquire);
      return n - seenTaken_[to] < ShmArena::kPostSlots;
    });
    if (s != Status::kOk) return s;
    noteProgress();
  }
  std::atomic<std::uint64_t>& stamp = arena_.postStamp(rank_, to, n % ShmArena::kPostSlots);
  std::memcpy(reinterpret_cast<unsigned char*>(&stamp) + sizeof(stamp), data, bytes);
  stamp.store(n + 1, std::memory_order_release);
  posted_[to] = n + 1;
  return Status::kOk;
}

Status ShmChannel::take(int from, void* out, std::size_t bytes) {
  const std::uint64_t n = taken_[from];  // posts taken from `from` before this one
  std::atomic<std::uint64_t>& stamp = arena_.postStamp(from, rank_, n % ShmArena::kPostSlots);
  Patience w;
  const Status s = waitUntil(w, arena_, from, crowded_,
                             [&] { return stamp.load(std::memory_order_acquire) > n; });
  if (s != Status::kOk) return s;
  std::memcpy(out, reinterpret_cast<const unsigned char*>(&stamp) + sizeof(stamp), bytes);
  arena_.postsTaken(from, rank_).store(n + 1, std::memory_order_release);
  taken_[from] = n + 1;
  noteProgress();
  return Status::kOk;
}

}  // namespace overpass
