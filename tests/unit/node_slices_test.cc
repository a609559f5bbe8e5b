// How the hierarchical reductions share a vector among nodes of different sizes
// (coll/math/node_slices.h): the slices, their grouping into each node's blocks (BlockSplit with
// slices), and the owners of each slice, one per node.
#include "coll/math/node_slices.h"

#include <gtest/gtest.h>

#include <vector>

#include "coll/math/blocks.h"

namespace overpass {
namespace {

CollArgs ints(std::size_t count) {
  CollArgs a;
  a.count = count;
  a.bytes = count * 4;
  return a;
}

TEST(BlockSplit, OneSlicePerBlockByDefault) {
  const BlockSplit b(ints(10), 4);  // 3 3 2 2
  EXPECT_EQ(b.slices, 4);
  EXPECT_EQ(b.first(0), 0u);
  EXPECT_EQ(b.elements(0), 3u);
  EXPECT_EQ(b.first(2), 6u);
  EXPECT_EQ(b.elements(3), 2u);
  EXPECT_EQ(b.offset(3), 32u);
  EXPECT_EQ(b.first(4), 10u);
  EXPECT_EQ(b.maxElements(), 3u);
  EXPECT_EQ(BlockSplit(ints(8), 4).maxElements(), 2u);
}

// Blocks of consecutive slices: block b holds slices [b S / L, (b + 1) S / L), at least one each,
// the blocks tile the vector, and each slice starts where the ungrouped slices start.
TEST(BlockSplit, GroupedSlicesTileTheVector) {
  for (int slices = 1; slices <= 9; ++slices)
    for (int size = 1; size <= slices; ++size)
      for (std::size_t count : {std::size_t(slices), std::size_t{7}, std::size_t{1001}}) {
        if (count < static_cast<std::size_t>(slices)) continue;
        const BlockSplit whole(ints(count), slices), grouped(ints(count), size, slices);
        std::size_t most = 0;
        for (int b = 0; b < size; ++b) {
          EXPECT_LT(grouped.firstSlice(b), grouped.firstSlice(b + 1));
          EXPECT_EQ(grouped.first(b), whole.first(grouped.firstSlice(b)));
          EXPECT_EQ(grouped.first(b) + grouped.elements(b), grouped.first(b + 1));
          most = std::max(most, grouped.elements(b));
        }
        EXPECT_EQ(grouped.firstSlice(0), 0);
        EXPECT_EQ(grouped.firstSlice(size), slices);
        EXPECT_EQ(grouped.first(size), count);
        EXPECT_EQ(grouped.maxElements(), most);
      }
  // 3 slices on a node of 2 ranks: rank 0 one, rank 1 two (the later, smaller ones).
  const BlockSplit b(ints(10), 2, 3);  // slices 4 3 3
  EXPECT_EQ(b.elements(0), 4u);
  EXPECT_EQ(b.elements(1), 6u);
  EXPECT_EQ(b.maxElements(), 6u);
}

// The owner of a slice on each node is the rank whose block holds it.
TEST(NodeSlices, OwnerHoldsTheSliceInItsBlock) {
  for (int slices = 1; slices <= 9; ++slices)
    for (int size = 1; size <= slices; ++size) {
      const BlockSplit blocks(ints(1001), size, slices);
      for (int s = 0; s < slices; ++s) {
        const int owner = sliceOwner(s, slices, size);
        EXPECT_LE(blocks.firstSlice(owner), s) << slices << " " << size << " " << s;
        EXPECT_LT(s, blocks.firstSlice(owner + 1)) << slices << " " << size << " " << s;
      }
    }
  EXPECT_EQ(sliceOwner(2, 4, 4), 2);  // equal nodes: slice l is local rank l's
  EXPECT_EQ(sliceOwner(3, 4, 1), 0);  // a node of one rank owns every slice
}

TEST(NodeSlices, OwnersAreOneRankPerNodeInNodeOrder) {
  auto topo = [](const std::vector<int>& nodes) {
    std::vector<RankPlace> places;
    for (int n : nodes) places.push_back({n, -1, -1});
    return Topology::build(places);
  };
  // 2+1+1: two slices; rank 0 and 1 own one each, ranks 2 and 3 both.
  const Topology t = topo({0, 0, 1, 2});
  EXPECT_EQ(sliceOwners(t, 0, 2), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(sliceOwners(t, 1, 2), (std::vector<int>{1, 2, 3}));
  // 4+2+1 scattered: node 0 = {0, 2, 5, 6}, node 1 = {1, 4}, node 2 = {3}.
  const Topology u = topo({1, 0, 1, 2, 0, 1, 1});
  EXPECT_EQ(sliceOwners(u, 0, 4), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(sliceOwners(u, 1, 4), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(sliceOwners(u, 2, 4), (std::vector<int>{5, 4, 3}));
  EXPECT_EQ(sliceOwners(u, 3, 4), (std::vector<int>{6, 4, 3}));
  // Equal nodes: the rails.
  const Topology w = topo({0, 1, 0, 1, 0, 1});
  for (int s = 0; s < 3; ++s) EXPECT_EQ(sliceOwners(w, s, 3), w.rails()[s]);
}

}  // namespace
}  // namespace overpass
