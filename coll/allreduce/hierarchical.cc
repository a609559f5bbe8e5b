// Allreduce across nodes in three steps, each a flat algorithm on a sub-group (a SubTransport):
// the ranks of each node reduce-scatter the vector around a ring, so that local rank l holds
// slice l summed over its node; the l-th ranks of all nodes (rail l) allreduce slice l among
// themselves, every rail in parallel; the ranks of each node allgather the finished slices.
//
// Cost with N nodes of L ranks: node steps 2 (L - 1)(alpha + n/L beta) + (L - 1)/L n gamma inside
// the nodes; between nodes each rank moves only its slice: 2 (N - 1)/N n/L bytes with the ring
// (N > 2 and enough elements) or log2 N x n/L with recursive doubling. Flat algorithms send
// every byte across the network; here the inter-node traffic per node is cut by L.
// Preconditions: a commutative operation; every node has the same number of ranks L >= 2, N >= 2,
// count >= L (the registry's serves); anything else runs recursive doubling, which is correct
// for every call. Every slice is reduced identically on every rank of its rail, then copied:
// bitwise-identical results. Result: recvbuf on every rank.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/ring_allgather.h"
#include "coll/ring_reduce_scatter.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status allreduceHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  const int size = team.size();
  if (!topo || topo->size() != size || topo->nodeCount() < 2 || !topo->balanced() ||
      topo->maxRanksPerNode() < 2 || args.count < static_cast<std::size_t>(topo->maxRanksPerNode()))
    return allreduceRecursiveDoubling(args, team);
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int perNode = topo->maxRanksPerNode();
  auto* out = static_cast<unsigned char*>(args.recvbuf);

  // Node step 1: reduce-scatter; slice `local` of the node's sum lands in out.
  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch};
  const RingBlocks slices(args, perNode);
  OVERPASS_CHECK(ringReduceScatter(args, nodeTeam, slices, args.sendbuf, out));

  // Between nodes: the slice, in place, among the l-th ranks of every node.
  SubTransport railTransport(team.transport, topo->rails()[local]);
  Team railTeam{railTransport, team.scratch};
  CollArgs slice = args;
  slice.count = slices.elements(local);
  slice.bytes = slices.bytes(local);
  slice.sendbuf = slice.recvbuf = out + slices.offset(local);
  const int nodes = topo->nodeCount();
  OVERPASS_CHECK(nodes > 2 && slice.count >= static_cast<std::size_t>(nodes)
                     ? allreduceRing(slice, railTeam)
                     : allreduceRecursiveDoubling(slice, railTeam));

  // Node step 2: every finished slice to every rank of the node.
  return ringAllgather(args, nodeTeam, slices, out);
}

}  // namespace overpass
