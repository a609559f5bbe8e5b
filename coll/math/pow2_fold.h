// Pow2Fold: the rank mapping of the non-power-of-two fold that recursive doubling and recursive
// halving use (allreduce recursive_doubling and rabenseifner, reduce_scatter_block
// recursive_halving). With p2 the largest power of two <= p and r = p - p2 extra ranks, the first
// 2r ranks pair up: each even one (folded out) hands its data to the odd one above it (its
// partner, which absorbs it) before the power-of-two steps and gets the result back after them;
// the p2 remaining ranks take virtual ranks 0..p2-1: odd rank 2v + 1 (v < r) is virtual rank v,
// rank q >= 2r is virtual rank q - r. The data steps are coll/phases/pow2_fold.h.
#pragma once

#include <bit>

namespace overpass {

struct Pow2Fold {
  int size, p2, extra;

  explicit Pow2Fold(int p)
      : size(p),
        p2(p <= 1 ? 1 : static_cast<int>(std::bit_floor(static_cast<unsigned>(p)))),
        extra(p - p2) {}

  // Even ranks of the first 2r: they sit out the power-of-two steps.
  bool foldedOut(int rank) const { return rank < 2 * extra && rank % 2 == 0; }
  // Odd ranks of the first 2r: they absorb the rank below before the steps, hand back after.
  bool absorbs(int rank) const { return rank < 2 * extra && rank % 2 == 1; }
  // The other rank of a folded pair (only for ranks < 2r).
  int partner(int rank) const { return rank % 2 == 0 ? rank + 1 : rank - 1; }
  // The virtual rank of a rank that takes part in the steps (not foldedOut).
  int virtualRank(int rank) const { return rank < 2 * extra ? rank / 2 : rank - extra; }
  // The rank that plays virtual rank v.
  int realRank(int v) const { return v < extra ? v * 2 + 1 : v + extra; }
};

}  // namespace overpass
