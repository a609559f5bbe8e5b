// Reduce across nodes in three steps: the ranks of each node reduce-scatter the vector
// (coll/phases/node_reduce_scatter.h), so that each local rank holds its slices
// (coll/math/node_slices.h: S slices, S = the most ranks on one node; several per rank on smaller
// nodes) summed over its node; the owners of each slice, one per node, reduce it to its owner on
// the root's node, every slice's owners in parallel, a rank that owns several slices taking them in
// order (an algorithm selected for that many ranks, by default the binomial tree); the ranks of the
// root's node send their finished slices to the root.
//
// Cost with N nodes of L ranks: the node reduce-scatter ((L - 1) rounds of n/L), ceil(log2 N) x
// (alpha + n/L (beta + gamma)) between nodes, and L - 1 messages of n/L into the root: each
// node sends n bytes across the network in all (the flat binomial tree: n per rank that sends).
// Preconditions: a commutative operation; N >= 2, some node holding 2 or more ranks, count >= S
// (the registry's serves; a direct call on anything else declines, coll/algorithms.h).
// Result: recvbuf at the root; other ranks' recvbuf is not touched.
#include <vector>

#include "coll/algorithms.h"
#include "coll/math/node_slices.h"
#include "coll/phases/node_reduce_scatter.h"
#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/log.h"
#include "transport/sub_transport.h"

namespace overpass {

Status reduceHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (args.count < static_cast<std::size_t>(topo->maxRanksPerNode()))
    return decline(args.coll, "hierarchical", "fewer elements than ranks on the largest node");
  OVERPASS_TRACE("hierarchical reduce over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodeSize = topo->nodeSize(node), sliceCount = topo->maxRanksPerNode();
  const int rootNode = topo->nodeOf(args.root), rootLocal = topo->localRank(args.root);
  const bool isRoot = rank == args.root;
  // The whole vector's room: the root's result, elsewhere scratch (held across the steps).
  auto* work = static_cast<unsigned char*>(
      isRoot ? args.recvbuf : team.scratch.get(ScratchSlot::kWhole, args.bytes));
  const BlockSplit slices(args, sliceCount);
  const BlockSplit blocks(args, nodeSize, sliceCount);  // block l: the slices local rank l owns
  OVERPASS_CHECK(nodeReduceScatter(args, team, blocks, work));

  for (int s = blocks.firstSlice(local); s < blocks.firstSlice(local + 1); ++s) {
    // Between nodes, in place, towards slice s's owner on the root's node.
    SubTransport ownersTransport(team.transport, sliceOwners(*topo, s, sliceCount));
    Team owners{ownersTransport, team.scratch};
    CollArgs slice = args;
    slice.count = slices.elements(s);
    slice.bytes = slices.bytes(s);
    slice.sendbuf = slice.recvbuf = work + slices.offset(s);
    slice.root = rootNode;
    static const Algorithm& binomial = *findAlgorithm(Collective::kReduce, "binomial");
    OVERPASS_CHECK(selectStep(team.selector, slice, owners.size(), binomial).run(slice, owners));
  }

  if (node != rootNode || nodeSize == 1) return Status::kOk;
  const std::vector<int>& ranks = topo->nodeRanks(rootNode);
  const int tag = static_cast<int>(args.coll);
  if (!isRoot)
    return team.transport.send(work + blocks.offset(local), blocks.bytes(local), args.root, tag);
  std::vector<P2POp> ops;
  for (int q = 0; q < nodeSize; ++q)
    if (q != rootLocal)
      ops.push_back(P2POp::recv(work + blocks.offset(q), blocks.bytes(q), ranks[q]));
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  return team.transport.wait(request);
}

}  // namespace overpass
