// The host's progress board: one entry per Overpass process on this machine, in which each rank
// publishes the collective it is in, on which communicator and at which call on it, and the
// heartbeat of its watchdog. When a call of one rank stops making progress, its watchdog reads
// its peers' entries and names the rank that is behind, instead of the direct peer it waits for
// (a ring or a tree would blame an innocent neighbour). Lives in a shared-memory arena
// (shm/arena.h: created by the host's first rank, unlinked once every rank mapped it), one
// buffer page per rank; the shim exchanges its name (shim/watchdog.cc). No MPI here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "shm/arena.h"

namespace overpass {

// What one rank last published. Times are CLOCK_MONOTONIC nanoseconds, comparable between the
// processes of one machine.
struct BoardRecord {
  std::int64_t pid = 0;          // 0: the rank never published
  std::int64_t heartbeatNs = 0;  // the last tick of its watchdog thread
  std::uint64_t commKey = 0;     // the communicator of its latest call (commKey()); 0: unknown
  std::uint64_t call = 0;        // that call's number on its communicator, from 1; 0: unknown
  std::int32_t what = -1;        // the call: a Collective, or a BoardRecord::k* phase
  bool inCall = false;           // still inside it (else it returned at `sinceNs`)
  std::int64_t sinceNs = 0;      // when it entered the call, or returned from it

  static constexpr std::int32_t kStartup = 1000;   // Overpass's start-up inside MPI_Init
  static constexpr std::int32_t kTeardown = 1001;  // Overpass's teardown inside MPI_Finalize
  static constexpr std::int32_t kFinished = 1002;  // past the teardown: its watchdog has stopped
};

// The key every rank computes alike for a communicator: a hash of its members' world ranks in
// its order. Communicators of the same members in the same order share it (the report says so).
std::uint64_t commKey(const int* worldRanks, int size);

class ProgressBoard {
 public:
  explicit ProgressBoard(std::unique_ptr<ShmArena> arena);

  // The arena of a board for `ranks` processes (ShmArena::create with the entry's size).
  static std::unique_ptr<ShmArena> createArena(const std::string& name, int ranks,
                                               std::string* why);

  int ranks() const { return arena_->ranks(); }
  // Writes entry `index`: by its owner's one writer only.
  void publish(int index, const BoardRecord& record);
  void heartbeat(int index, std::int64_t nowNs);
  // A consistent copy of entry `index`.
  BoardRecord read(int index) const;

 private:
  struct Entry;
  Entry& entry(int index) const;
  std::unique_ptr<ShmArena> arena_;
};

// What a waiting rank concludes about one peer of its stuck call, from the peer's record.
enum class PeerVerdict {
  kWaitingToo,   // in the same call: waits like us
  kAhead,        // already past the call (a root that returned, say): not the cause
  kBehind,       // in an earlier call on this communicator, or returned from one
  kElsewhere,    // in (or last in) a call on another communicator
  kNeverCalled,  // has not published anything
  kNotRunning,   // its heartbeat stopped: the process is stopped or starved of the CPU
  kExited,       // its process is gone
  kFinished,     // it has left Overpass at MPI_Finalize
  kUnknown,      // our own call's communicator is not known: cannot compare
};

// How much of the stuck call a peer explains: kDirect, it has not arrived (or cannot);
// kIndirect, it is itself stuck in another call (which waits on someone else, or deadlocks).
enum class Blame { kNone, kIndirect, kDirect };

struct PeerView {
  PeerVerdict verdict;
  Blame blame;
};

// `stale`: how old a heartbeat may be before the peer counts as not running. Pure.
PeerView judgePeer(const BoardRecord& mine, const BoardRecord& peer, bool peerAlive,
                   std::int64_t nowNs, std::int64_t staleNs);

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonicNs();

}  // namespace overpass
