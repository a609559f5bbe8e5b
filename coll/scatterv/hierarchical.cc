// Scatterv across nodes in two steps, the reverse of the hierarchical gatherv
// (coll/gatherv/hierarchical.cc), where only the root knows the blocks' sizes. Step 1: the root
// sends each other node's rank on its full rail (Topology::fullRail: the rank with the root's
// local rank, or on a smaller node the one at that local rank modulo the node's rank count) a
// header, the sizes of that node's blocks in node-rank order (one uint64 per rank: both sides
// know the node's rank count), then the node's blocks packed in that order, straight from
// sendbuf where sendBlocks holds them back to back (coll/math/block_runs.h), else packed into
// scratch first (no message for an empty node buffer, which both sides then know). A node of one
// rank gets no header (its rank knows its size): its block alone. Step 2, in each node of two or
// more ranks: the rail rank scatters the node's blocks within the node (a scatterv whose blocks it
// lays out from the header; the root straight from sendbuf, during its step 1 sends), with an
// algorithm selected for the node's ranks (coll/select/selector.h selectNodeStep, as a call of 0
// bytes, as every scatterv is selected: by default through the node's shared memory where the
// node has a channel, else linearly on the node's SubTransport).
// Cost with N nodes: N - 1 headers and N - 1 messages out of the root (in one batch), then the
// node step: as many bytes cross the network as with a flat scatterv, in 2 (N - 1) messages
// instead of p - L (L: the ranks of the root's node).
// Preconditions: N >= 2 and some node holding 2 or more ranks (the registry's serves; a direct
// call on anything else declines, coll/algorithms.h); nodes may hold different numbers of ranks.
// Uses scratch slots kWhole (the root's packed node buffers) and kNodeBlocks (a rail rank's node
// buffer), held across the node step's flat algorithms.
// Result: block q of the root's sendbuf (sendBlocks) in recvbuf of rank q (in place at the root:
// recvbuf is the root's block of sendbuf and is left alone).
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "coll/algorithms.h"
#include "coll/math/block_runs.h"
#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/log.h"
#include "transport/sub_transport.h"

namespace overpass {
namespace {

// The root's sends to the other nodes (rail rank j: node j): headers (node j's block sizes, at
// sizes[at[j]]) and node buffers, straight from sendbuf where they can be, else packed into
// kWhole.
struct NodeBuffers {
  std::vector<P2POp> ops;
  std::vector<std::uint64_t> sizes;

  NodeBuffers(const CollArgs& args, Team& team, const Topology& topo, int rootNode) {
    const BlockLayout& b = args.sendBlocks;
    const auto* in = static_cast<const unsigned char*>(args.sendbuf);
    const int nodes = topo.nodeCount();
    std::vector<std::optional<std::ptrdiff_t>> runs(nodes);
    std::vector<std::size_t> at(nodes + 1, 0);
    std::size_t staged = 0;
    for (int j = 0; j < nodes; ++j) {
      const std::vector<int>& ranks = topo.nodeRanks(j);
      auto rankOf = [&ranks](int i) { return ranks[i]; };
      at[j + 1] = at[j] + ranks.size();
      if (j == rootNode) continue;
      runs[j] = backToBack(b, topo.nodeSize(j), rankOf);
      if (!runs[j]) staged += runBytes(b, topo.nodeSize(j), rankOf);
    }
    sizes.resize(at[nodes]);
    for (int j = 0; j < nodes; ++j)
      for (int l = 0; l < topo.nodeSize(j); ++l) sizes[at[j] + l] = b.bytes[topo.nodeRanks(j)[l]];
    auto* staging = staged
                        ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kWhole, staged))
                        : nullptr;
    ops.reserve(2 * nodes);
    for (int j = 0; j < nodes; ++j) {
      if (j == rootNode) continue;
      const std::vector<int>& ranks = topo.nodeRanks(j);
      if (ranks.size() > 1)
        ops.push_back(P2POp::send(&sizes[at[j]], ranks.size() * sizeof(std::uint64_t), j));
      const std::size_t bytes = runBytes(b, topo.nodeSize(j), [&ranks](int i) { return ranks[i]; });
      if (bytes == 0) continue;
      if (runs[j]) {
        ops.push_back(P2POp::send(in + *runs[j], bytes, j));
        continue;
      }
      ops.push_back(P2POp::send(staging, bytes, j));
      for (int q : ranks) {
        if (b.bytes[q]) std::memcpy(staging, in + b.offset[q], b.bytes[q]);
        staging += b.bytes[q];
      }
    }
  }
};

}  // namespace

Status scattervHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  OVERPASS_TRACE("hierarchical scatterv over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodeSize = topo->nodeSize(node), rootNode = topo->nodeOf(args.root);
  const int rootLocal = topo->localRank(args.root), from = rootLocal % nodeSize;
  const int tag = static_cast<int>(args.coll);
  const bool isRoot = rank == args.root, onRail = local == from;
  SubTransport railTransport(team.transport, topo->fullRail(rootLocal));

  // Step 1: the node buffers along the rail (the root's sends in flight during its node step).
  std::optional<NodeBuffers> buffers;
  Transport::Request request;
  std::vector<std::uint64_t> sizes;  // a rail rank's header
  const unsigned char* nodeBuffer = nullptr;
  if (isRoot) {
    buffers.emplace(args, team, *topo, rootNode);
    if (!buffers->ops.empty()) OVERPASS_CHECK(railTransport.start(buffers->ops, tag, &request));
  } else if (onRail && nodeSize == 1) {
    return args.bytes ? railTransport.recv(args.recvbuf, args.bytes, rootNode, tag) : Status::kOk;
  } else if (onRail) {
    sizes.resize(nodeSize);
    OVERPASS_CHECK(
        railTransport.recv(sizes.data(), nodeSize * sizeof(std::uint64_t), rootNode, tag));
    const std::size_t total = sumOf(sizes.data(), nodeSize);
    nodeBuffer = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kNodeBlocks, total));
    if (total)
      OVERPASS_CHECK(
          railTransport.recv(const_cast<unsigned char*>(nodeBuffer), total, rootNode, tag));
  }

  // Step 2: the node's blocks within the node, from its rank on the rail.
  Status status = Status::kOk;
  if (nodeSize == 1) {  // the root, alone on its node
    const auto* own =
        static_cast<const unsigned char*>(args.sendbuf) + args.sendBlocks.offset[rank];
    if (args.bytes && own != args.recvbuf) std::memcpy(args.recvbuf, own, args.bytes);
  } else {
    SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
    Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
    nodeTeam.streamAbove = team.streamAbove;
    const std::vector<int>& members = topo->nodeRanks(node);
    std::vector<std::size_t> bytes(onRail ? nodeSize : 0);
    std::vector<std::ptrdiff_t> offset(onRail ? nodeSize : 0);
    CollArgs inNode = args;
    inNode.root = from;
    inNode.sendbuf = nullptr;
    inNode.sendBlocks = {};
    if (isRoot) {  // straight from sendbuf
      for (int l = 0; l < nodeSize; ++l) {
        bytes[l] = args.sendBlocks.bytes[members[l]];
        offset[l] = args.sendBlocks.offset[members[l]];
      }
      inNode.sendbuf = args.sendbuf;
    } else if (onRail) {  // packed in node order
      std::size_t at = 0;
      for (int l = 0; l < nodeSize; ++l) {
        bytes[l] = static_cast<std::size_t>(sizes[l]);
        offset[l] = static_cast<std::ptrdiff_t>(at);
        at += bytes[l];
      }
      inNode.sendbuf = nodeBuffer;
    }
    if (onRail) inNode.sendBlocks = {bytes.data(), offset.data()};
    // Selected as every scatterv is, as a call of 0 bytes: the ranks' sizes differ.
    CollArgs shape = inNode;
    shape.bytes = shape.count = 0;
    static const Algorithm& linear = *findAlgorithm(Collective::kScatterv, "linear");
    status = selectNodeStep(team, shape, nodeSize, linear).run(inNode, nodeTeam);
  }
  if (request) {
    const Status s = railTransport.wait(request);
    if (status == Status::kOk) status = s;
  }
  return status;
}

}  // namespace overpass
