// A rank's place in the binomial tree rooted at `root`, as the binomial scatter and gather use
// it: in relative ranks v = (rank - root) mod p, rank v's subtree is v .. v + span - 1 (span =
// lowbit(v) clipped to p; the root's is everything), its parent is v - lowbit(v) and its children
// are v + m for the powers of two m < lowbit(v). Blocks of a subtree travel contiguous in relative
// order; the one subtree whose team ranks wrap past p - 1 (a child of the root) is split there.
// Pure arithmetic, unit-tested (tests/unit/binomial_tree_test.cc).
#pragma once

#include <algorithm>

namespace overpass {

struct BinomialSubtree {
  int size, root, v, mask, span;

  BinomialSubtree(int rank, int rootRank, int teamSize)
      : size(teamSize), root(rootRank), v((rank - rootRank + teamSize) % teamSize), mask(1) {
    while (mask < size && !(v & mask)) mask <<= 1;
    span = std::min(mask, size - v);
  }
  // The team rank of relative rank u.
  int absolute(int u) const { return (u + root) % size; }
  int parent() const { return absolute(v - mask); }  // for v > 0
  // Of `count` blocks for relative ranks u .. u + count - 1, how many come before the team ranks
  // wrap past p - 1 (all of them unless the run wraps).
  int beforeWrap(int u, int count) const { return std::min(count, size - absolute(u)); }
};

}  // namespace overpass
