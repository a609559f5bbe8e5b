// The first node step of the hierarchical reductions (allreduce, reduce): the ranks of each node
// reduce-scatter the vector, so that local rank l ends with block l (`blocks`: BlockSplit over
// the node's ranks, grouping the slices of coll/math/node_slices.h) of the node's sum. Through the
// node's shared memory when the node has a channel with room for one element per rank (per round
// every rank copies the next piece of every block into its buffer, and rank l combines piece l of
// all buffers in node-rank order), else around a ring on a SubTransport of the node's ranks; on a
// node of one rank, a copy.
#pragma once

#include "coll/coll_args.h"
#include "coll/math/blocks.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// The node's channel when the node steps over `blocks` (one per rank of the node) can go through
// it, else null.
inline ShmChannel* nodeChannel(const Team& team, const BlockSplit& blocks) {
  return team.nodeShm && team.nodeShm->bufferBytes() >= blocks.element * blocks.size ? team.nodeShm
                                                                                     : nullptr;
}

// Block `localRank` of the node's sum lands at work + blocks.offset(localRank); `work` holds
// args.bytes (the ring also leaves partials in the other blocks). Uses the phase slots of its ring.
Status nodeReduceScatter(const CollArgs& args, Team& team, const BlockSplit& blocks,
                         unsigned char* work);

}  // namespace overpass
