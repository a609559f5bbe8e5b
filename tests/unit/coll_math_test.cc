// The shared arithmetic of coll/math/ (the non-power-of-two fold's rank mapping) and the slot pool
// behind the algorithms' scratch memory (common/slot_pool.h, coll/team.h).
#include <gtest/gtest.h>

#include <set>

#include "coll/math/pow2_fold.h"
#include "coll/team.h"

namespace overpass {
namespace {

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
