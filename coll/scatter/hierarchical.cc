// Scatter across nodes in three steps, the reverse of the hierarchical gather: the root puts the
// blocks in node order; it scatters one buffer per node (that node's blocks) to each node's rank
// on the root's full rail (Topology::fullRail: the rank with the root's local rank, or on a
// smaller node the one at that local rank modulo the node's rank count), on equal nodes with an
// algorithm selected for that many ranks (by default linear), on unequal nodes, whose buffers
// differ in size, linearly; each of those scatters its node's blocks within the node (an
// algorithm selected for the node's ranks, coll/select/selector.h selectNodeStep: by default
// through the node's shared memory when the node has a channel, else linearly on the node's
// SubTransport; a node of one rank keeps its block). Cost with N nodes of L ranks: N - 1 messages
// of L n out of the root, then the node step: as many bytes cross the network as with a flat
// scatter, in N - 1 messages instead of p - 1. Preconditions: N >= 2 and some node holding 2 or
// more ranks (the registry's serves; a direct call on anything else declines, coll/algorithms.h).
// Result: block r of the root's sendbuf in rank r's recvbuf.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/log.h"
#include "transport/sub_transport.h"

namespace overpass {
namespace {

// The node buffers (node j's at `at`[j] blocks into `all`) from the root (rail rank `root`) to
// every rank of `rail`, linearly, into `mine`.
Status scatterNodeBuffers(const CollArgs& args, Team& rail, const Topology& topo,
                          const std::vector<std::size_t>& at, const unsigned char* all,
                          unsigned char* mine) {
  const std::size_t n = args.bytes;
  const int tag = static_cast<int>(args.coll), me = rail.rank();
  if (me != args.root) return rail.transport.recv(mine, topo.nodeSize(me) * n, args.root, tag);
  std::vector<P2POp> ops;
  ops.reserve(rail.size());
  for (int j = 0; j < rail.size(); ++j)
    if (j != me) ops.push_back(P2POp::send(all + at[j] * n, topo.nodeSize(j) * n, j));
  Transport::Request request;
  OVERPASS_CHECK(rail.transport.start(ops, tag, &request));
  std::memcpy(mine, all + at[me] * n, topo.nodeSize(me) * n);
  return rail.transport.wait(request);
}

}  // namespace

Status scatterHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (args.bytes == 0) return Status::kOk;
  OVERPASS_TRACE("hierarchical scatter over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodes = topo->nodeCount(), nodeSize = topo->nodeSize(node);
  const int rootLocal = topo->localRank(args.root), from = rootLocal % nodeSize;
  const std::size_t n = args.bytes, nodeBytes = n * nodeSize;
  const bool isRoot = rank == args.root;
  // Held across the rail step, whose flat algorithm uses the flat slots.
  auto* nodeBlocks =
      local == from
          ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kNodeBlocks, nodeBytes))
          : nullptr;

  if (local == from) {
    std::vector<std::size_t> at(nodes + 1, 0);  // node j's first block in node order
    for (int j = 0; j < nodes; ++j) at[j + 1] = at[j] + topo->nodeSize(j);
    auto* all =
        isRoot ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kWhole, n * at[nodes]))
               : nullptr;
    if (isRoot) {
      const auto* in = static_cast<const unsigned char*>(args.sendbuf);
      for (int j = 0; j < nodes; ++j)
        for (int l = 0; l < topo->nodeSize(j); ++l)
          std::memcpy(all + (at[j] + l) * n,
                      in + static_cast<std::size_t>(topo->nodeRanks(j)[l]) * n, n);
    }
    SubTransport railTransport(team.transport, topo->fullRail(rootLocal));
    Team railTeam{railTransport, team.scratch};
    CollArgs acrossNodes = args;
    acrossNodes.sendbuf = all;
    acrossNodes.recvbuf = nodeBlocks;
    acrossNodes.root = topo->nodeOf(args.root);
    if (topo->balanced()) {
      acrossNodes.bytes = acrossNodes.count = nodeBytes;
      static const Algorithm& linear = *findAlgorithm(Collective::kScatter, "linear");
      OVERPASS_CHECK(
          selectStep(team.selector, acrossNodes, nodes, linear).run(acrossNodes, railTeam));
    } else {
      OVERPASS_CHECK(scatterNodeBuffers(acrossNodes, railTeam, *topo, at, all, nodeBlocks));
    }
  }

  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
  CollArgs inNode = args;
  inNode.root = from;
  inNode.sendbuf = nodeBlocks;
  static const Algorithm& linear = *findAlgorithm(Collective::kScatter, "linear");
  return selectNodeStep(team, inNode, nodeSize, linear).run(inNode, nodeTeam);
}

}  // namespace overpass
