// Reduce-scatter by recursive halving among the p2 (a power of two) virtual ranks of a
// Pow2Fold (coll/math/pow2_fold.h): the phase allreduce rabenseifner and reduce_scatter_block
// recursive_halving share.
//
// The vector is cut into p2 virtual blocks, virtual block v at bytes [offset(v), offset(v + 1))
// (offset(p2) is the end; how the blocks are laid out is the caller's). At distance p2/2, p2/4,
// ..., 1 virtual rank v swaps with v xor distance: it sends the half of its current range of
// blocks that the partner keeps and combines the partner's copy of the half it keeps; after
// log2(p2) steps it holds virtual block v combined over all ranks. Where the data is read from,
// where the incoming half lands and how it is combined (the operand order) are the caller's
// HalvingPlan, so that each algorithm keeps its buffers and its bit-exact results. Empty halves
// (fewer elements than blocks) are not sent: both partners derive the sizes from the same
// offsets, so they skip the same messages.
// Cost: log2(p2) alpha + (p2 - 1)/p2 n (beta + gamma), n = the whole vector's bytes.
#pragma once

#include <cstddef>

#include "coll/math/pow2_fold.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// One step: this rank keeps virtual blocks [keep, keep + mask) and gives [give, give + mask) to
// `peer` (a team rank).
struct HalvingStep {
  int mask, peer, keep, give;
  std::size_t keepOffset, keepBytes, giveOffset, giveBytes;
};

class HalvingPlan {
 public:
  virtual ~HalvingPlan() = default;
  // Byte offset of virtual block v, v in [0, p2]: nondecreasing, the same on every rank.
  virtual std::size_t offset(int v) const = 0;
  // The buffer the given half is read from, at step.giveOffset.
  virtual const unsigned char* source(const HalvingStep& step) = 0;
  // Where the partner's copy of the kept half is received (step.keepBytes).
  virtual unsigned char* target(const HalvingStep& step) = 0;
  // Runs while the first step's messages are in flight.
  virtual void whileFirstInFlight() {}
  // Combines the received half (at `received`) with this rank's own.
  virtual void combine(const HalvingStep& step, unsigned char* received) = 0;
};

// Runs the steps on a rank that takes part (not fold.foldedOut(team.rank())); afterwards the
// rank holds virtual block fold.virtualRank(team.rank()), where the plan combined it.
Status recursiveHalving(Team& team, int tag, const Pow2Fold& fold, HalvingPlan& plan);

}  // namespace overpass
