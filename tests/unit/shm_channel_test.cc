// The shared-memory channel (shm/channel.h): where a round's payload sits (beside the stamp, in
// its cache line, up to kBesideBytes; from the next line on above, and for kLines), and that what
// one rank writes there in a round is what the other reads, for payloads either side of the
// border, over many rounds (both buffers, each reused). Posts: taken in the order posted, whole,
// between rounds too; a sender runs at most kPostSlots posts ahead of its receiver; a channel
// made again goes on from its posts; teams above kPostRanks have none.
#include "shm/channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

// Rank 0 posts to rank 1 many messages of every size up to kPostBytes, between rounds of the
// same channel; rank 1 takes them late (after a pause every few), and gets each whole, in order.
// Rank 0 never gets more than kPostSlots posts ahead of what rank 1 took.
TEST(ShmChannel, PostsArriveWholeInOrderAndTheSenderWaitsForAFullBox) {
  auto arena = ShmArena::anonymous(2, kBuffer);
  ASSERT_TRUE(arena->hasPosts());
  constexpr int kPosts = 300;
  std::atomic<int> taken{0};
  int ahead = 0, wrong = 0;
  auto byte = [](int k, std::size_t i) { return static_cast<unsigned char>(k * 31 + i * 7 + 1); };
  auto size = [](int k) { return static_cast<std::size_t>(k * 37) % (ShmChannel::kPostBytes + 1); };
  std::thread receiver([&] {
    ShmChannel ch(*arena, 1, 0);
    std::vector<unsigned char> out(ShmChannel::kPostBytes);
    for (int k = 0; k < kPosts; ++k) {
      if (k % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (k % 100 == 0 && ch.sync() != Status::kOk) return;  // a round between the posts
      std::fill(out.begin(), out.end(), 0);
      if (ch.take(0, out.data(), size(k)) != Status::kOk) return;
      for (std::size_t i = 0; i < size(k); ++i) wrong += out[i] != byte(k, i);
      taken.store(k + 1, std::memory_order_release);
    }
  });
  ShmChannel ch(*arena, 0, 0);
  std::vector<unsigned char> in(ShmChannel::kPostBytes);
  for (int k = 0; k < kPosts; ++k) {
    if (k % 100 == 0) {
      ASSERT_EQ(ch.sync(), Status::kOk);
    }
    for (std::size_t i = 0; i < size(k); ++i) in[i] = byte(k, i);
    ASSERT_EQ(ch.post(1, in.data(), size(k)), Status::kOk);
    ahead = std::max(ahead, k + 1 - taken.load(std::memory_order_acquire));
  }
  receiver.join();
  EXPECT_EQ(wrong, 0);
  // (The test's count of takes lags the box's by up to one take; a slot written before its post
  // was taken would have shown as wrong bytes.)
  EXPECT_LE(ahead, static_cast<int>(ShmArena::kPostSlots) + 1);
  EXPECT_GE(ahead, 2);  // the sender did run ahead of the receiver's pauses
}

// A channel made again on the same arena (as the shim does for a communicator's new engine) goes
// on from the posts its rank made and took, in both directions.
TEST(ShmChannel, AChannelMadeAgainGoesOnFromItsPosts) {
  auto arena = ShmArena::anonymous(2, kBuffer);
  const int payload[2] = {11, 22};
  int out = 0;
  {
    ShmChannel a(*arena, 0, 0), b(*arena, 1, 0);
    for (int k = 0; k < 5; ++k) {
      ASSERT_EQ(a.post(1, &payload[k % 2], sizeof(int)), Status::kOk);
      ASSERT_EQ(b.take(0, &out, sizeof(int)), Status::kOk);
      EXPECT_EQ(out, payload[k % 2]);
    }
    ASSERT_EQ(a.post(1, &payload[1], sizeof(int)), Status::kOk);  // not yet taken
  }
  ShmChannel a(*arena, 0, 0), b(*arena, 1, 0);
  ASSERT_EQ(b.take(0, &out, sizeof(int)), Status::kOk);
  EXPECT_EQ(out, payload[1]);
  for (int k = 0; k < 20; ++k) {  // past the slots, so that the counts must agree
    ASSERT_EQ(a.post(1, &payload[k % 2], sizeof(int)), Status::kOk);
    ASSERT_EQ(b.take(0, &out, sizeof(int)), Status::kOk);
    EXPECT_EQ(out, payload[k % 2]);
  }
}

TEST(ShmChannel, TeamsAboveThePostRanksHaveNoBoxes) {
  EXPECT_TRUE(ShmArena::anonymous(ShmArena::kPostRanks, kBuffer)->hasPosts());
  EXPECT_FALSE(ShmArena::anonymous(ShmArena::kPostRanks + 1, kBuffer)->hasPosts());
}

}  // namespace
}  // namespace overpass
