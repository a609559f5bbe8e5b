// The rank-order reduce-scatter: block r of the result, reduced on rank r with every element
// combined in rank order, ((x0 op x1) op x2) ... op x(p-1), the running result always being
// MPI_Reduce_local's `in` operand. Every rank-order algorithm (deterministic mode) is built on it
// or combines in the same sequence, so they all give the same bits.
//
// Steps: one round in which every rank sends block q of its input to rank q and receives block r
// of every other rank (all posted at once), then p - 1 local reductions in rank order, the last
// one written straight into `out`.
// Cost: (p - 1) alpha + (p - 1)/p n beta + (p - 1)/p n gamma (all messages of the round in
// flight together; the receiving side is the bottleneck).
#pragma once

#include "coll/coll_args.h"
#include "coll/math/blocks.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// `input` is the rank's whole vector (the blocks of `blocks`); `out` receives the reduced block
// r and may lie inside `input`. Uses scratch slot kPhaseBlocks.
Status rankOrderReduceScatter(const CollArgs& args, Team& team, const BlockSplit& blocks,
                              const void* input, void* out);

}  // namespace overpass
