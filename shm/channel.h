// One rank's end of a shared-memory arena (shm/arena.h): collectives as a sequence of rounds that
// every rank of the node goes through in the same order.
//
// A round k: a rank that has data to share calls reserve(), writes into next() (its buffer of
// this round; rounds alternate between its two buffers), then every rank calls sync(), which
// publishes round k and waits until the ranks it reads from (all, or one) have published it;
// afterwards peer(q) is rank q's buffer of round k, readable until the rank's next round.
// reserve() waits until every rank has published round k - 1: a rank publishes k - 1 only after
// it finished everything of round k - 2, the last round that read the buffer next() reuses. A
// rank may also write into the part of a peer's buffer that only it reads (the reduce-scatter
// of the shm allreduce) before its next sync().
//
// Waiting spins briefly (not at all where ranks outnumber cores), then yields the core, and every
// ~50 ms checks that the ranks not yet arrived are alive. OVERPASS_TIMEOUT is the watchdog's
// (shim/watchdog.h): each completed round is a progress note for it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "shm/arena.h"

namespace overpass {

class ShmChannel {
 public:
  // Spins before a waiting rank yields its core: where ranks fit on the cores; where they
  // outnumber them, a waiting rank yields at once (the rank it waits for may need its core).
  static constexpr int kSpins = 256;
  static constexpr int kSpinsOversubscribed = 0;

  // Records this process's pid in the arena.
  ShmChannel(ShmArena& arena, int rank, long pid, int spins = kSpins);

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t bufferBytes() const { return bytes_; }

  static constexpr int kAll = -1;

  // Waits until next() may be written (every rank is past the round before this one).
  Status reserve() { return waitFor(kAll, round_); }
  unsigned char* next() const { return arena_.buffer(rank_, (round_ + 1) % 2); }
  // Publishes the round, then waits for rank `from` (kAll: every rank) to publish it too.
  Status sync(int from = kAll);
  unsigned char* peer(int q) const { return arena_.buffer(q, round_ % 2); }

 private:
  Status waitFor(int from, std::uint64_t round);

  ShmArena& arena_;
  int rank_, size_;
  std::size_t bytes_;
  std::uint64_t round_ = 0;
  int spins_;
};

}  // namespace overpass
