// Scatter across nodes in three steps, the reverse of the hierarchical gather: the root puts the
// blocks in node order; it scatters one buffer of L blocks to each node's rank on the root's rail
// (an algorithm selected for that many ranks, by default linear); each of those scatters its
// node's blocks within the node (through the node's shared memory when the node has a channel,
// else linearly on the node's SubTransport).
// Cost with N nodes of L ranks: N - 1 messages of L n out of the root, then the node step: as
// many bytes cross the network as with a flat scatter, in N - 1 messages instead of p - 1.
// Preconditions: every node holds the same number of ranks L >= 2 and N >= 2 (the registry's
// serves); anything else runs the flat linear scatter. Result: block r of the root's sendbuf in
// rank r's recvbuf.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/registry.h"
#include "coll/selector.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status scatterHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overEqualNodes(team)) return scatterLinear(args, team);
  if (args.bytes == 0) return Status::kOk;
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int perNode = topo->maxRanksPerNode(), nodes = topo->nodeCount();
  const int rootLocal = topo->localRank(args.root);
  const std::size_t n = args.bytes, nodeBytes = n * perNode;
  const bool isRoot = rank == args.root;
  // Slots 2 and 3: the rail step's algorithm may use 0 and 1.
  auto* nodeBlocks =
      local == rootLocal ? static_cast<unsigned char*>(team.scratch.get(2, nodeBytes)) : nullptr;

  if (local == rootLocal) {
    auto* all =
        isRoot ? static_cast<unsigned char*>(team.scratch.get(3, nodeBytes * nodes)) : nullptr;
    if (isRoot) {
      const auto* in = static_cast<const unsigned char*>(args.sendbuf);
      for (int j = 0; j < nodes; ++j)
        for (int l = 0; l < perNode; ++l)
          std::memcpy(all + (static_cast<std::size_t>(j) * perNode + l) * n,
                      in + static_cast<std::size_t>(topo->nodeRanks(j)[l]) * n, n);
    }
    SubTransport railTransport(team.transport, topo->rails()[rootLocal]);
    Team railTeam{railTransport, team.scratch};
    CollArgs acrossNodes = args;
    acrossNodes.bytes = nodeBytes;
    acrossNodes.count = nodeBytes;
    acrossNodes.sendbuf = all;
    acrossNodes.recvbuf = nodeBlocks;
    acrossNodes.root = topo->nodeOf(args.root);
    static const Algorithm& linear = *findAlgorithm(Collective::kScatter, "linear");
    OVERPASS_CHECK(
        selectStep(team.selector, acrossNodes, nodes, linear).run(acrossNodes, railTeam));
  }

  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
  CollArgs inNode = args;
  inNode.root = rootLocal;
  inNode.sendbuf = nodeBlocks;
  return team.nodeShm ? scatterShm(inNode, nodeTeam) : scatterLinear(inNode, nodeTeam);
}

}  // namespace overpass
