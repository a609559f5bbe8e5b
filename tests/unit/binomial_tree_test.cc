// The binomial tree arithmetic of coll/math/binomial_tree.h: every rank's subtree is its own
// relative rank plus its children's subtrees, the subtrees of the root's children partition the
// other ranks, and the wrap split puts exactly the team ranks below p before the wrap.
#include "coll/math/binomial_tree.h"

#include <gtest/gtest.h>

namespace overpass {
namespace {

TEST(BinomialTree, SubtreesNestAndPartitionTheTeamAtEveryRoot) {
  for (int p = 1; p <= 33; ++p)
    for (int root = 0; root < p; ++root) {
      for (int rank = 0; rank < p; ++rank) {
        const BinomialSubtree t(rank, root, p);
        EXPECT_EQ(t.absolute(t.v), rank);
        EXPECT_GE(t.span, 1);
        EXPECT_LE(t.v + t.span, p);
        if (t.v == 0) {
          EXPECT_EQ(t.span, p) << "the root's subtree is the team";
          continue;
        }
        // The parent's subtree contains this one; this rank is its child at distance mask.
        const BinomialSubtree parent(t.parent(), root, p);
        EXPECT_EQ(parent.v + t.mask, t.v);
        EXPECT_LT(t.mask, parent.mask);
        EXPECT_LE(t.v + t.span, parent.v + parent.span);
        // Children: v + m for m < mask; their subtrees tile v + 1 .. v + span - 1.
        int next = t.v + 1;
        for (int m = 1; m < t.mask && t.v + m < p; m <<= 1) {
          const BinomialSubtree child(t.absolute(t.v + m), root, p);
          EXPECT_EQ(child.v, next);
          next += child.span;
        }
        EXPECT_EQ(next, t.v + t.span) << "p=" << p << " root=" << root << " rank=" << rank;
      }
    }
}

TEST(BinomialTree, WrapSplitCountsTheTeamRanksBelowP) {
  for (int p = 1; p <= 17; ++p)
    for (int root = 0; root < p; ++root) {
      const BinomialSubtree t(root, root, p);
      for (int u = 1; u < p; ++u)
        for (int count = 1; u + count <= p; ++count) {
          int before = 0;
          while (before < count && t.absolute(u + before) >= t.absolute(u)) ++before;
          EXPECT_EQ(t.beforeWrap(u, count), before) << p << " " << root << " " << u;
        }
    }
}

}  // namespace
}  // namespace overpass
