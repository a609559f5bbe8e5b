// The reduce-scatter phase around a ring: the first half of the ring allreduce, and the building
// block of the reduce-scatter-based compositions to come.
//
// The vector of `args.count` elements is cut into p blocks (coll/math/blocks.h, BlockSplit).
// In step k (0..p-2) rank r sends its partial sum of block (r - k - 1) mod p to r + 1
// and reduces the partial of block (r - k - 2) mod p that arrives from r - 1 into its own; after
// p - 1 steps block r of `work` holds the reduction over all ranks (other blocks hold partials).
// Cost: (p - 1) x (alpha + n/p beta + n/p gamma). Preconditions: a commutative operation.
#pragma once

#include <cstddef>

#include "coll/coll_args.h"
#include "coll/math/blocks.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// `input` is the rank's vector; `work` receives it (copied while the first exchange is in
// flight, unless they are the same buffer) and ends with the reduced block r. Needs
// args.count > 0 and a team of 2 or more. Uses scratch slot kPhaseIncoming.
Status ringReduceScatter(const CollArgs& args, Team& team, const BlockSplit& blocks,
                         const void* input, unsigned char* work);

}  // namespace overpass
