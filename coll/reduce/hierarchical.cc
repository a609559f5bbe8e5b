// Reduce across nodes in three steps: the ranks of each node reduce-scatter the vector
// (coll/node_reduce_scatter.h), so that local rank l holds slice l summed over its node; the
// l-th ranks of all nodes (rail l) reduce slice l to the rail's rank on the root's node, every
// rail in parallel (an algorithm selected for that many ranks, by default the binomial tree); the
// ranks of the root's node send their finished slices to the root.
//
// Cost with N nodes of L ranks: the node reduce-scatter ((L - 1) rounds of n/L), ceil(log2 N) x
// (alpha + n/L (beta + gamma)) between nodes, and L - 1 messages of n/L into the root: each
// node sends n bytes across the network in all (the flat binomial tree: n per rank that sends).
// Preconditions: a commutative operation; every node holds the same number of ranks L >= 2,
// N >= 2, count >= L (the registry's serves); anything else runs the flat binomial reduce.
// Result: recvbuf at the root; other ranks' recvbuf is not touched.
#include <vector>

#include "coll/algorithms.h"
#include "coll/node_reduce_scatter.h"
#include "coll/registry.h"
#include "coll/selector.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status reduceHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overEqualNodes(team) || args.count < static_cast<std::size_t>(topo->maxRanksPerNode()))
    return reduceBinomial(args, team);
  const int rank = team.rank(), local = topo->localRank(rank), perNode = topo->maxRanksPerNode();
  const int rootNode = topo->nodeOf(args.root), rootLocal = topo->localRank(args.root);
  const bool isRoot = rank == args.root;
  // The whole vector's room: the root's result, elsewhere scratch (slot 3: the node step uses 0,
  // the binomial reduce 0 and 1).
  auto* work = static_cast<unsigned char*>(isRoot ? args.recvbuf : team.scratch.get(3, args.bytes));
  const RingBlocks slices(args, perNode);
  OVERPASS_CHECK(nodeReduceScatter(args, team, slices, work));

  unsigned char* mine = work + slices.offset(local);
  if (slices.elements(local)) {  // between nodes, in place, towards the root's node
    SubTransport railTransport(team.transport, topo->rails()[local]);
    Team railTeam{railTransport, team.scratch};
    CollArgs slice = args;
    slice.count = slices.elements(local);
    slice.bytes = slices.bytes(local);
    slice.sendbuf = slice.recvbuf = mine;
    slice.root = rootNode;
    static const Algorithm& binomial = *findAlgorithm(Collective::kReduce, "binomial");
    OVERPASS_CHECK(
        selectStep(team.selector, slice, railTeam.size(), binomial).run(slice, railTeam));
  }

  if (topo->nodeOf(rank) != rootNode) return Status::kOk;
  const std::vector<int>& node = topo->nodeRanks(rootNode);
  const int tag = static_cast<int>(args.coll);
  if (!isRoot)
    return slices.bytes(local) ? team.transport.send(mine, slices.bytes(local), args.root, tag)
                               : Status::kOk;
  std::vector<P2POp> ops;
  for (int q = 0; q < perNode; ++q)
    if (q != rootLocal && slices.bytes(q))
      ops.push_back(P2POp::recv(work + slices.offset(q), slices.bytes(q), node[q]));
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  return team.transport.wait(request);
}

}  // namespace overpass
