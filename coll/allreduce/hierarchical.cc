// Allreduce across nodes in three steps: the ranks of each node reduce-scatter the vector
// (coll/phases/node_reduce_scatter.h), so that each local rank holds its slices
// (coll/math/node_slices.h: S slices, S = the most ranks on one node; one per rank on a node of S
// ranks, several per rank on smaller nodes) summed over its node; the owners of each slice, one per
// node, allreduce it among themselves with a flat algorithm on a SubTransport, every slice's owners
// in parallel, a rank that owns several slices taking them in order (selected for that many ranks:
// coll/select/selector.h, selectStep; by default the ring where it serves, else recursive
// doubling); the ranks of each node allgather the finished slices. The node steps go through the
// node's shared memory (chunk by chunk, as the shm allreduce) when the node has a channel, else
// around a ring on a SubTransport of the node's ranks; a node of one rank has none.
//
// Cost with N nodes of L ranks: node steps 2 (L - 1)(alpha + n/L beta) + (L - 1)/L n gamma inside
// the nodes; between nodes each rank moves only its slice: 2 (N - 1)/N n/L bytes with the ring
// (N > 2 and enough elements) or log2 N x n/L with recursive doubling. Flat algorithms send
// every byte across the network; here the inter-node traffic per node is cut by L. On unequal
// nodes a rank of a node of L ranks moves S/L slices in S/L steps: its node still sends n bytes
// across the network in all, in pieces of n/S.
// Fewer elements than S (a loss scalar, a flag): count slices of one element, so that some local
// ranks own none and sit out the step between nodes; the vector still crosses once.
// Preconditions: a commutative operation; N >= 2, some node holding 2 or more ranks, count >= 1
// (the registry's serves; a direct call on anything else declines, coll/algorithms.h). Every slice
// is reduced identically on every rank that owns it, then copied: bitwise-identical results.
// Result: recvbuf on every rank.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/math/node_slices.h"
#include "coll/phases/node_reduce_scatter.h"
#include "coll/phases/ring_allgather.h"
#include "coll/phases/shm_gather.h"
#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/log.h"
#include "transport/sub_transport.h"

namespace overpass {

Status allreduceHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (args.count == 0) return decline(args.coll, "hierarchical", "no element");
  OVERPASS_TRACE("hierarchical allreduce over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodeSize = topo->nodeSize(node), nodes = topo->nodeCount();
  const int sliceCount =
      static_cast<int>(std::min<std::size_t>(topo->maxRanksPerNode(), args.count));
  auto* out = static_cast<unsigned char*>(args.recvbuf);

  // Slice `s`, in place, among its owners on every node: an allreduce of its own, its algorithm
  // selected for `nodes` ranks (by default the ring where it serves, else recursive doubling).
  const BlockSplit slices(args, sliceCount);
  auto acrossNodes = [&](int s) {
    SubTransport ownersTransport(team.transport, sliceOwners(*topo, s, sliceCount));
    Team owners{ownersTransport, team.scratch};
    CollArgs slice = args;
    slice.count = slices.elements(s);
    slice.bytes = slices.bytes(s);
    slice.sendbuf = slice.recvbuf = out + slices.offset(s);
    static const Algorithm& ring = *findAlgorithm(Collective::kAllreduce, "ring");
    static const Algorithm& doubling = *findAlgorithm(Collective::kAllreduce, "recursive_doubling");
    const bool ringServes = nodes > 2 && slice.count >= static_cast<std::size_t>(nodes);
    return selectStep(team.selector, slice, nodes, ringServes ? ring : doubling).run(slice, owners);
  };

  const BlockSplit blocks(args, nodeSize, sliceCount);  // block l: the slices local rank l owns
  OVERPASS_CHECK(nodeReduceScatter(args, team, blocks, out));
  for (int s = blocks.firstSlice(local); s < blocks.firstSlice(local + 1); ++s)
    OVERPASS_CHECK(acrossNodes(s));
  if (nodeSize == 1) return Status::kOk;

  // Node allgather through shared memory: per round rank l copies the next piece of its block
  // in, every rank copies every piece out.
  if (ShmChannel* channel = nodeChannel(team, blocks))
    return shmAllgatherBlocks(*channel, blocks, out);
  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch};
  // Node step 2: every finished block to every rank of the node.
  return ringAllgather(args, nodeTeam, blocks, out);
}

}  // namespace overpass
