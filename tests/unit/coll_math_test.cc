// The shared arithmetic of coll/math/ (the non-power-of-two fold's rank mapping, runs of blocks
// that travel as one message) and the slot pool
// behind the algorithms' scratch memory (common/slot_pool.h, coll/team.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "coll/math/block_runs.h"
#include "coll/math/pow2_fold.h"
#include "coll/team.h"

namespace overpass {
namespace {

// Runs of blocks (coll/math/block_runs.h): back to back in the order given, empty blocks' offsets
// ignored; a gap, a wrong order or an overlap is no run.
TEST(BlockRuns, BackToBackInTheOrderGivenEmptyBlocksAnywhere) {
  const std::vector<std::size_t> bytes = {4, 0, 8, 12, 0};
  const std::vector<std::ptrdiff_t> offset = {100, -50, 104, 112, 7};
  const BlockLayout l{bytes.data(), offset.data()};
  auto from = [](std::vector<int> order) { return [order](int i) { return order[i]; }; };
  EXPECT_EQ(runBytes(l, 5, from({0, 1, 2, 3, 4})), 24u);
  EXPECT_EQ(backToBack(l, 5, from({0, 1, 2, 3, 4})), std::optional<std::ptrdiff_t>{100});
  EXPECT_EQ(backToBack(l, 2, from({2, 3})), std::optional<std::ptrdiff_t>{104});
  EXPECT_EQ(backToBack(l, 2, from({3, 2})), std::nullopt);                         // wrong order
  EXPECT_EQ(backToBack(l, 2, from({0, 3})), std::nullopt);                         // a gap
  EXPECT_EQ(backToBack(l, 3, from({4, 1, 4})), std::optional<std::ptrdiff_t>{0});  // all empty
  EXPECT_EQ(backToBack(l, 0, from({})), std::optional<std::ptrdiff_t>{0});
  const std::vector<std::ptrdiff_t> overlap = {100, 0, 102, 110, 0};
  EXPECT_EQ(backToBack(BlockLayout{bytes.data(), overlap.data()}, 2, from({0, 2})), std::nullopt);
  const std::uint64_t sizes[] = {3, 0, 5};
  EXPECT_EQ(sumOf(sizes, 3), 8u);
  EXPECT_EQ(sumOf(sizes + 1, 1), 0u);
}

// Every rank is folded out, absorbs, or plays a virtual rank of its own; the virtual ranks are
// 0..p2-1 exactly once, and realRank inverts virtualRank.
TEST(Pow2Fold, FoldedPairsAndVirtualRanksCoverTheTeam) {
  for (int p = 1; p <= 70; ++p) {
    const Pow2Fold fold(p);
    EXPECT_EQ(fold.p2 & (fold.p2 - 1), 0) << p;
    EXPECT_LE(fold.p2, p);
    EXPECT_GT(fold.p2 * 2, p);
    std::set<int> virtualRanks;
    for (int r = 0; r < p; ++r) {
      if (fold.foldedOut(r)) {
        EXPECT_TRUE(fold.absorbs(fold.partner(r))) << p << " " << r;
        EXPECT_EQ(fold.partner(fold.partner(r)), r);
        continue;
      }
      const int v = fold.virtualRank(r);
      EXPECT_TRUE(virtualRanks.insert(v).second) << p << " " << r;
      EXPECT_EQ(fold.realRank(v), r) << p << " " << r;
    }
    EXPECT_EQ(static_cast<int>(virtualRanks.size()), fold.p2) << p;
    EXPECT_EQ(*virtualRanks.rbegin(), fold.p2 - 1) << p;
  }
}

// Named slots are independent buffers, kept while large enough and grown when not.
TEST(Scratch, NamedSlotsAreIndependentKeptAndGrown) {
  Scratch scratch;
  void* a = scratch.get(ScratchSlot::kIncoming, 100);
  void* b = scratch.get(ScratchSlot::kPartial, 100);
  EXPECT_NE(a, b);
  EXPECT_EQ(scratch.get(ScratchSlot::kIncoming, 50), a);
  static_cast<unsigned char*>(scratch.get(ScratchSlot::kIncoming, 1 << 20))[(1 << 20) - 1] = 1;
  EXPECT_EQ(scratch.get(ScratchSlot::kPartial, 100), b);
  for (int s = 0; s < Scratch::kSlots; ++s)
    EXPECT_NE(scratch.get(static_cast<ScratchSlot>(s), 8), nullptr) << s;
}

}  // namespace
}  // namespace overpass
