// Allreduce across nodes in three steps: the ranks of each node reduce-scatter the vector
// (coll/node_reduce_scatter.h), so that local rank l holds slice l summed over its node; the l-th
// ranks of all nodes (rail l) allreduce slice l among themselves with a flat algorithm on a
// SubTransport, every rail in parallel (selected for that many ranks: coll/selector.h,
// selectStep; by default the ring where it serves, else recursive doubling); the ranks of each
// node allgather the finished slices. The
// node steps go through the node's shared memory (chunk by chunk, as the shm allreduce) when the
// node has a channel, else around a ring on a SubTransport of the node's ranks.
//
// Cost with N nodes of L ranks: node steps 2 (L - 1)(alpha + n/L beta) + (L - 1)/L n gamma inside
// the nodes; between nodes each rank moves only its slice: 2 (N - 1)/N n/L bytes with the ring
// (N > 2 and enough elements) or log2 N x n/L with recursive doubling. Flat algorithms send
// every byte across the network; here the inter-node traffic per node is cut by L.
// Preconditions: a commutative operation; every node has the same number of ranks L >= 2, N >= 2,
// count >= L (the registry's serves); anything else runs recursive doubling, which is correct
// for every call. Every slice is reduced identically on every rank of its rail, then copied:
// bitwise-identical results. Result: recvbuf on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/node_reduce_scatter.h"
#include "coll/registry.h"
#include "coll/ring_allgather.h"
#include "coll/selector.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status allreduceHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overEqualNodes(team) || args.count < static_cast<std::size_t>(topo->maxRanksPerNode()))
    return allreduceRecursiveDoubling(args, team);
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int perNode = topo->maxRanksPerNode();
  auto* out = static_cast<unsigned char*>(args.recvbuf);

  const int nodes = topo->nodeCount();
  SubTransport railTransport(team.transport, topo->rails()[local]);
  Team railTeam{railTransport, team.scratch};
  // The slice `n` elements at `at`, in place, among the l-th ranks of every node: an allreduce
  // of its own, its algorithm selected for `nodes` ranks (by default the ring where it serves,
  // else recursive doubling).
  auto acrossNodes = [&](unsigned char* at, std::size_t n) {
    CollArgs slice = args;
    slice.count = n;
    slice.bytes = n * (args.bytes / args.count);
    slice.sendbuf = slice.recvbuf = at;
    static const Algorithm& ring = *findAlgorithm(Collective::kAllreduce, "ring");
    static const Algorithm& doubling = *findAlgorithm(Collective::kAllreduce, "recursive_doubling");
    const bool ringServes = nodes > 2 && n >= static_cast<std::size_t>(nodes);
    return selectStep(team.selector, slice, nodes, ringServes ? ring : doubling)
        .run(slice, railTeam);
  };

  const RingBlocks slices(args, perNode);  // slice l: the part local rank l reduces and sends
  OVERPASS_CHECK(nodeReduceScatter(args, team, slices, out));
  unsigned char* mine = out + slices.offset(local);
  if (slices.elements(local)) OVERPASS_CHECK(acrossNodes(mine, slices.elements(local)));

  if (ShmChannel* channel = nodeChannel(team, slices)) {
    // Node allgather through shared memory: per round rank l copies the next piece of its slice
    // in, every rank copies every piece out.
    ShmChannel& ch = *channel;
    const std::size_t e = slices.element, part = ch.bufferBytes() / e;
    for (std::size_t first = 0; first < slices.elements(0); first += part) {
      auto count = [&](int q) {
        return slices.elements(q) > first ? std::min(part, slices.elements(q) - first) : 0;
      };
      OVERPASS_CHECK(ch.reserve());
      std::memcpy(ch.next(), mine + first * e, count(local) * e);
      OVERPASS_CHECK(ch.sync());
      for (int q = 0; q < perNode; ++q)
        if (q != local) std::memcpy(out + slices.offset(q) + first * e, ch.peer(q), count(q) * e);
    }
    return Status::kOk;
  }
  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch};
  // Node step 2: every finished slice to every rank of the node.
  return ringAllgather(args, nodeTeam, slices, out);
}

}  // namespace overpass
