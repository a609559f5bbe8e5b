// Gather across nodes in three steps: on each node, its rank on the root's full rail
// (Topology::fullRail: the rank with the root's local rank, or on a smaller node the one at that
// local rank modulo the node's rank count) gathers its node's blocks (an algorithm selected for the
// node's ranks, coll/select/selector.h selectNodeStep: by default through the node's shared memory
// when the node has a channel, else linearly on the node's SubTransport; a node of one rank has
// only its own block); those ranks gather the node buffers to the root along the rail (on equal
// nodes an algorithm selected for that many ranks, by default linear; on unequal nodes, whose
// buffers differ in size, linearly: the flat algorithms take equal blocks); the root puts every
// block in its place (communicator rank order). Cost with N nodes of L ranks: the node step, then N
// - 1 messages of L n into the root: as many bytes cross the network as with a flat gather, in N -
// 1 messages instead of p - 1. Preconditions: N >= 2 and some node holding 2 or more ranks (the
// registry's serves; a direct call on anything else declines, coll/algorithms.h). Result: block i
// of rank i at recvbuf + i n on the root.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/log.h"
#include "transport/sub_transport.h"

namespace overpass {
namespace {

// The node buffers (node j's: its ranks' blocks in node-rank order, at `at`[j] blocks into
// `all`) from every rank of `rail` to the root (rail rank `root`), linearly.
Status gatherNodeBuffers(const CollArgs& args, Team& rail, const Topology& topo,
                         const std::vector<std::size_t>& at, const unsigned char* mine,
                         unsigned char* all) {
  const std::size_t n = args.bytes;
  const int tag = static_cast<int>(args.coll), me = rail.rank();
  if (me != args.root) return rail.transport.send(mine, topo.nodeSize(me) * n, args.root, tag);
  std::vector<P2POp> ops;
  ops.reserve(rail.size());
  for (int j = 0; j < rail.size(); ++j)
    if (j != me) ops.push_back(P2POp::recv(all + at[j] * n, topo.nodeSize(j) * n, j));
  Transport::Request request;
  OVERPASS_CHECK(rail.transport.start(ops, tag, &request));
  std::memcpy(all + at[me] * n, mine, topo.nodeSize(me) * n);
  return rail.transport.wait(request);
}

}  // namespace

Status gatherHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (args.bytes == 0) return Status::kOk;
  OVERPASS_TRACE("hierarchical gather over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodes = topo->nodeCount(), nodeSize = topo->nodeSize(node);
  const int rootLocal = topo->localRank(args.root), from = rootLocal % nodeSize;
  const std::size_t n = args.bytes, nodeBytes = n * nodeSize;
  // Held across the rail step, whose flat algorithm uses the flat slots.
  auto* nodeBlocks =
      local == from
          ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kNodeBlocks, nodeBytes))
          : nullptr;

  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
  CollArgs inNode = args;
  inNode.root = from;
  inNode.recvbuf = nodeBlocks;
  static const Algorithm& linear = *findAlgorithm(Collective::kGather, "linear");
  OVERPASS_CHECK(selectNodeStep(team, inNode, nodeSize, linear).run(inNode, nodeTeam));
  if (local != from) return Status::kOk;

  SubTransport railTransport(team.transport, topo->fullRail(rootLocal));
  Team railTeam{railTransport, team.scratch};
  const bool isRoot = rank == args.root;
  std::vector<std::size_t> at(nodes + 1, 0);  // node j's first block in node order
  for (int j = 0; j < nodes; ++j) at[j + 1] = at[j] + topo->nodeSize(j);
  auto* all =
      isRoot ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kWhole, n * at[nodes]))
             : nullptr;
  CollArgs acrossNodes = args;
  acrossNodes.sendbuf = nodeBlocks;
  acrossNodes.recvbuf = all;
  acrossNodes.root = topo->nodeOf(args.root);
  if (topo->balanced()) {
    acrossNodes.bytes = acrossNodes.count = nodeBytes;
    static const Algorithm& linear = *findAlgorithm(Collective::kGather, "linear");
    OVERPASS_CHECK(
        selectStep(team.selector, acrossNodes, nodes, linear).run(acrossNodes, railTeam));
  } else {
    OVERPASS_CHECK(gatherNodeBuffers(acrossNodes, railTeam, *topo, at, nodeBlocks, all));
  }
  if (!isRoot) return Status::kOk;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  for (int j = 0; j < nodes; ++j)
    for (int l = 0; l < topo->nodeSize(j); ++l)
      std::memcpy(out + static_cast<std::size_t>(topo->nodeRanks(j)[l]) * n, all + (at[j] + l) * n,
                  n);
  return Status::kOk;
}

}  // namespace overpass
