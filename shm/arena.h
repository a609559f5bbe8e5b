// The node-local shared-memory arena of one communicator: a POSIX shared-memory segment that
// every rank of a node maps. Layout: a header, one control line per rank (its pid, on a 128-byte
// line of its own), then per rank two data buffers of `bufferBytes` (rounds alternate between
// them; see shm/channel.h), each on the cache lines after a line of its own that starts with a
// stamp: the round it last carried, which a rank reading the buffer polls. The rest of the
// stamp's line (kBesideBytes) holds a small payload, which then arrives in the same cache line as
// the news that it is there. Teams of up to kPostRanks ranks also get, after the buffers, one box
// per ordered pair of ranks for posts (shm/channel.h): kPostSlots slots of a stamp and up to
// kPostBytes of payload, then a line with the count of posts the receiver took. The leader
// creates and sizes the segment (space reserved up front, so that a full /dev/shm is an error
// here instead of a SIGBUS later); the others attach by name; the leader unlinks the name as soon
// as every rank has mapped it, so nothing is left behind however the job ends. No MPI here: the
// shim exchanges the name.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace overpass {

class ShmArena {
 public:
  static constexpr std::size_t kLine = 128;
  // The stamp's line: the stamp, padded to 16 bytes, then kBesideBytes for a small payload; the
  // data buffer starts on the next line.
  static constexpr std::size_t kStampLine = 64;
  static constexpr std::size_t kStampBytes = 16;
  static constexpr std::size_t kBesideBytes = kStampLine - kStampBytes;

  struct Control {
    std::atomic<std::int64_t> pid;  // the rank's process, for liveness checks
  };

  // Posts: teams of up to kPostRanks ranks; each slot a stamp (8 bytes) and the payload after it.
  static constexpr int kPostRanks = 8;
  static constexpr std::size_t kPostSlots = 32;
  static constexpr std::size_t kPostBytes = 256;
  static constexpr std::size_t kPostSlotBytes = 320;  // 8 + kPostBytes, on whole lines

  ~ShmArena();
  ShmArena(const ShmArena&) = delete;
  ShmArena& operator=(const ShmArena&) = delete;

  // Creates and maps a new segment `name` ("/overpass-..."), or returns null with *why set.
  static std::unique_ptr<ShmArena> create(const std::string& name, int ranks,
                                          std::size_t bufferBytes, std::string* why);
  // Maps the segment another rank created; null with *why set on failure.
  static std::unique_ptr<ShmArena> attach(const std::string& name, std::string* why);
  // Private memory with the same layout, for ranks that are threads of one process (unit tests).
  static std::unique_ptr<ShmArena> anonymous(int ranks, std::size_t bufferBytes);
  // Removes the name (the mappings stay valid). Idempotent.
  static void unlink(const std::string& name);

  int ranks() const;
  std::size_t bufferBytes() const;
  Control& control(int rank) const;
  unsigned char* buffer(int rank, int which) const;              // which: 0 or 1
  std::atomic<std::uint64_t>& stamp(int rank, int which) const;  // the buffer's stamp
  unsigned char* beside(int rank, int which) const;              // the kBesideBytes after the stamp
  // Whether the team has post boxes (at most kPostRanks ranks).
  bool hasPosts() const { return ranks() <= kPostRanks; }
  // Slot `slot` of the box from rank `from` to rank `to`: its stamp, the payload 8 bytes on.
  std::atomic<std::uint64_t>& postStamp(int from, int to, std::size_t slot) const;
  // The box's count of the posts `to` has taken.
  std::atomic<std::uint64_t>& postsTaken(int from, int to) const;

 private:
  ShmArena(void* base, std::size_t bytes)
      : base_(static_cast<unsigned char*>(base)), bytes_(bytes) {}
  static std::size_t layoutBytes(int ranks, std::size_t bufferBytes);
  unsigned char* box(int from, int to) const;
  void initAtomics(int ranks);

  unsigned char* base_;
  std::size_t bytes_;
};

}  // namespace overpass
