// Gather across nodes in three steps: on each node, the rank with the root's local rank (the
// node's rank on the root's rail) gathers its node's blocks (through the node's shared memory
// when the node has a channel, else linearly on the node's SubTransport); those ranks gather the
// node buffers to the root along the rail (an algorithm selected for that many ranks, by default
// linear); the root puts every block in its place (communicator rank order).
// Cost with N nodes of L ranks: the node step, then N - 1 messages of L n into the root: as many
// bytes cross the network as with a flat gather, in N - 1 messages instead of p - 1.
// Preconditions: every node holds the same number of ranks L >= 2 and N >= 2 (the registry's
// serves); anything else runs the flat linear gather. Result: block i of rank i at recvbuf +
// i n on the root.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/registry.h"
#include "coll/selector.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status gatherHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overEqualNodes(team)) return gatherLinear(args, team);
  if (args.bytes == 0) return Status::kOk;
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int perNode = topo->maxRanksPerNode(), nodes = topo->nodeCount();
  const int rootLocal = topo->localRank(args.root);
  const std::size_t n = args.bytes, nodeBytes = n * perNode;
  // Slots 2 and 3: the rail step's algorithm may use 0 and 1.
  auto* nodeBlocks =
      local == rootLocal ? static_cast<unsigned char*>(team.scratch.get(2, nodeBytes)) : nullptr;

  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
  CollArgs inNode = args;
  inNode.root = rootLocal;
  inNode.recvbuf = nodeBlocks;
  OVERPASS_CHECK(team.nodeShm ? gatherShm(inNode, nodeTeam) : gatherLinear(inNode, nodeTeam));
  if (local != rootLocal) return Status::kOk;

  SubTransport railTransport(team.transport, topo->rails()[rootLocal]);
  Team railTeam{railTransport, team.scratch};
  const bool isRoot = rank == args.root;
  auto* all =
      isRoot ? static_cast<unsigned char*>(team.scratch.get(3, nodeBytes * nodes)) : nullptr;
  CollArgs acrossNodes = args;
  acrossNodes.bytes = nodeBytes;
  acrossNodes.count = nodeBytes;
  acrossNodes.sendbuf = nodeBlocks;
  acrossNodes.recvbuf = all;
  acrossNodes.root = topo->nodeOf(args.root);
  static const Algorithm& linear = *findAlgorithm(Collective::kGather, "linear");
  OVERPASS_CHECK(selectStep(team.selector, acrossNodes, nodes, linear).run(acrossNodes, railTeam));
  if (!isRoot) return Status::kOk;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  for (int j = 0; j < nodes; ++j)
    for (int l = 0; l < perNode; ++l)
      std::memcpy(out + static_cast<std::size_t>(topo->nodeRanks(j)[l]) * n,
                  all + (static_cast<std::size_t>(j) * perNode + l) * n, n);
  return Status::kOk;
}

}  // namespace overpass
