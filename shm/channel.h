// One rank's end of a shared-memory arena (shm/arena.h): collectives as a sequence of rounds that
// every rank of the node goes through in the same order.
//
// A round k: a rank that has data to share calls reserve(), writes into next() (its buffer of
// this round; rounds alternate between its two buffers), then every rank calls sync(), which
// publishes round k and waits until the ranks it reads from (all, or one) have published it;
// afterwards peer(q) is rank q's buffer of round k, readable until the rank's next round.
// Where the payload sits depends on its size, which writer and readers name alike (see next()).
// reserve() waits until every rank has published round k - 1: a rank publishes k - 1 only after
// it finished everything of round k - 2, the last round that read the buffer next() reuses. A
// rank may also write into the part of a peer's buffer that only it reads (the reduce-scatter
// of the shm allreduce) before its next sync().
//
// Posts, outside the rounds (teams of up to ShmArena::kPostRanks ranks): post(q) puts up to
// kPostBytes into the next slot of this rank's box for rank q, and returns; take(p) waits for the
// next post of rank p in this rank's box from it and copies it out. Each box is a queue of
// ShmArena::kPostSlots slots taken in the order posted, so a sender waits only where the receiver
// has not yet taken its post kPostSlots before: a root posting a small message moves on as the
// MPI library's does after an inline send (coll/gather/post.cc). The posts of every pair follow
// the order of the collectives, which every rank calls in the same order.
//
// Waiting polls the peers' stamps. Where ranks outnumber cores, a waiting rank gives its core
// away after every poll (the rank it waits for may need it); elsewhere it never does, as the MPI
// library's own waits: under other processes' load a yield hands the core to them for a whole
// time slice (np 2 beside a busy loop per core, 8-byte allreduce: median 4 ms per call with a
// yield after 256 polls, 0.54 us without, Open MPI 0.50). Inside a nonblocking collective (a
// fiber) a wait hands the thread back at once, or after kSpins polls where the thread waits for
// it. Every ~50 ms a wait checks that the ranks not yet arrived are alive. OVERPASS_TIMEOUT is the
// watchdog's (shim/watchdog.h): each completed round is a progress note for it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "shm/arena.h"
#include "shm/core_distance.h"

namespace overpass {

class ShmChannel {
 public:
  // Polls between two passes of the idle hook (common/progress.h), and those of a fiber awaited
  // by its thread before it hands the thread back.
  static constexpr int kSpins = 256;

  // Records this process's pid in the arena. `crowded`: ranks outnumber the node's cores.
  ShmChannel(ShmArena& arena, int rank, long pid, bool crowded = false);

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t bufferBytes() const { return bytes_; }
  // The bytes of each of `slots` equal slots of a buffer, every one starting on a cache line
  // (copies run on whole lines); 0 where the buffer holds fewer lines than slots.
  std::size_t slotBytes(std::size_t slots) const { return bytes_ / slots / 64 * 64; }
  bool crowded() const { return crowded_; }

  static constexpr int kAll = -1;

  // A payload of up to kBesideBytes sits beside the buffer's stamp, in its cache line, and
  // arrives with it; a larger one fills bufferBytes() from the next line on, where copies and
  // reductions run on whole lines (16 bytes off them, the np 4 shm reduce_scatter of 256 KiB ran
  // at 2.10x Open MPI, on them at 2.40x). `bytes`: as much as the round may put in the buffer,
  // named alike by its writer and its readers. kLines: the lines, whatever the size, for a
  // payload beside a header, which itself takes next(sizeof header).
  static constexpr std::size_t kBesideBytes = ShmArena::kBesideBytes;
  static constexpr std::size_t kLines = ~std::size_t{0};

  // Waits until next() may be written (every rank is past the round before this one).
  Status reserve() { return waitFor(kAll, round_); }
  // This rank's buffer of the next round, for a payload of `bytes`.
  unsigned char* next(std::size_t bytes) const { return place(rank_, round_ + 1, bytes); }
  // Publishes the round, then waits for rank `from` (kAll: every rank) to publish it too
  // (rank(): publishes it only).
  Status sync(int from = kAll);
  // Waits until rank q has published this rank's last round (after sync(rank()): only the ranks
  // it must wait for).
  Status await(int q) { return waitFor(q, round_); }
  // Rank q's buffer of this round, for a payload of `bytes`.
  unsigned char* peer(int q, std::size_t bytes) const { return place(q, round_, bytes); }

  // Posts (above): whether this team has boxes, and the most one post holds.
  static constexpr std::size_t kPostBytes = ShmArena::kPostBytes;
  bool posts() const { return arena_.hasPosts(); }
  Status post(int to, const void* data, std::size_t bytes);
  Status take(int from, void* out, std::size_t bytes);

  // Rank q's process, as its channel recorded it (every rank's is there before its first round).
  long pid(int q) const { return arena_.control(q).pid.load(std::memory_order_relaxed); }

  // Whether the ranks of this channel may read each other's memory (coll/allreduce/cma.cc), as
  // they agreed at the first call that asked: the same on every rank.
  enum class PeerReads { kUnknown, kYes, kNo };
  PeerReads peerReads() const { return peerReads_; }
  void setPeerReads(PeerReads agreed) { peerReads_ = agreed; }
  // How far apart the cores of a two-rank team sit, as the ranks last agreed, and the calls that
  // pace the readings (shm/core_distance.h).
  CoreReading& cores() { return cores_; }
  const CoreReading& cores() const { return cores_; }

 private:
  Status waitFor(int from, std::uint64_t round);
  unsigned char* place(int q, std::uint64_t round, std::size_t bytes) const {
    const Slots& s = slots_[q];
    return bytes <= kBesideBytes ? s.beside[round % 2] : s.lines[round % 2];
  }

  // Each rank's two buffers and their stamps in this process's mapping, computed once.
  struct Slots {
    unsigned char* beside[2];
    unsigned char* lines[2];
    std::atomic<std::uint64_t>* stamp[2];
  };

  ShmArena& arena_;
  std::vector<Slots> slots_;
  int rank_, size_;
  std::size_t bytes_;
  std::uint64_t round_ = 0;
  // Per peer: posts made to it, posts taken from it, and its count of this rank's posts taken as
  // last read.
  std::vector<std::uint64_t> posted_, taken_, seenTaken_;
  bool crowded_;
  PeerReads peerReads_ = PeerReads::kUnknown;
  CoreReading cores_;
};

}  // namespace overpass
