// The shared-memory channel (shm/channel.h): where a round's payload sits (beside the stamp, in
// its cache line, up to kBesideBytes; from the next line on above, and for kLines), and that what
// one rank writes there in a round is what the other reads, for payloads either side of the
// border, over many rounds (both buffers, each reused).
#include "shm/channel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace overpass {
namespace {

constexpr std::size_t kBuffer = 4096;

std::uintptr_t lineOf(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) / ShmArena::kStampLine;
}

TEST(ShmChannel, SmallPayloadsSitInTheStampsLineLargerOnesOnTheLinesAfter) {
  auto arena = ShmArena::anonymous(1, kBuffer);
  ShmChannel ch(*arena, 0, 0);
  for (int round = 0; round < 2; ++round) {  // both buffers
    ASSERT_EQ(ch.reserve(), Status::kOk);
    unsigned char* beside = ch.next(ShmChannel::kBesideBytes);
    unsigned char* lines = ch.next(ShmChannel::kBesideBytes + 1);
    EXPECT_EQ(ch.next(1), beside);
    EXPECT_EQ(ch.next(0), beside);
    EXPECT_EQ(ch.next(kBuffer), lines);
    EXPECT_EQ(ch.next(ShmChannel::kLines), lines);
    // Beside: the same line as the stamp, and the whole payload in it.
    EXPECT_EQ(lineOf(beside), lineOf(beside - ShmArena::kStampBytes));
    EXPECT_EQ(lineOf(beside + ShmChannel::kBesideBytes - 1), lineOf(beside));
    // Lines: on a line of its own, right after the stamp's, holding a whole buffer.
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(lines) % ShmArena::kStampLine, 0u);
    EXPECT_EQ(lineOf(lines), lineOf(beside) + 1);
    std::memset(lines, 0xab, kBuffer);
    std::memset(beside, 0xcd, ShmChannel::kBesideBytes);  // the two do not overlap
    EXPECT_EQ(lines[0], 0xab);
    ASSERT_EQ(ch.sync(), Status::kOk);
    EXPECT_EQ(ch.peer(0, 1), beside);
    EXPECT_EQ(ch.peer(0, kBuffer), lines);
  }
}

TEST(ShmChannel, EachRankReadsWhatTheOtherWroteAtEverySize) {
  auto arena = ShmArena::anonymous(2, kBuffer);
  const std::vector<std::size_t> sizes = {1,
                                          8,
                                          ShmChannel::kBesideBytes - 1,
                                          ShmChannel::kBesideBytes,
                                          ShmChannel::kBesideBytes + 1,
                                          64,
                                          1000,
                                          kBuffer};
  constexpr int kRepeats = 50;
  std::vector<int> wrong(2, 0);
  auto byte = [](int rank, std::size_t size, int k, std::size_t i) {
    return static_cast<unsigned char>(rank * 131 + size * 7 + k * 3 + i);
  };
  auto run = [&](int rank) {
    ShmChannel ch(*arena, rank, 0);
    for (int k = 0; k < kRepeats; ++k)
      for (std::size_t size : sizes) {
        if (ch.reserve() != Status::kOk) return;
        unsigned char* mine = ch.next(size);
        for (std::size_t i = 0; i < size; ++i) mine[i] = byte(rank, size, k, i);
        if (ch.sync() != Status::kOk) return;
        const unsigned char* theirs = ch.peer(1 - rank, size);
        for (std::size_t i = 0; i < size; ++i)
          wrong[rank] += theirs[i] != byte(1 - rank, size, k, i);
      }
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  EXPECT_EQ(wrong[0], 0);
  EXPECT_EQ(wrong[1], 0);
}

}  // namespace
}  // namespace overpass
