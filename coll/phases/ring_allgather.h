// The allgather phase around a ring, over the blocks of coll/math/blocks.h: the second
// half of the ring allreduce and of the other reduce-scatter + allgather compositions.
//
// Rank r starts with its finished block r in `work`; in step k (0..p-2) it sends block
// (r - k) mod p to r + 1 and receives block (r - k - 1) mod p from r - 1.
// Cost: (p - 1) x (alpha + n/p beta).
#pragma once

#include "coll/math/blocks.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

Status ringAllgather(const CollArgs& args, Team& team, const BlockSplit& blocks,
                     unsigned char* work);

}  // namespace overpass
