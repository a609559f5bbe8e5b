// Gatherv across nodes in two steps, as the hierarchical gather (coll/gather/hierarchical.cc),
// where only the root knows the blocks' sizes. Step 1, in each node: the node's rank on the
// root's full rail (Topology::fullRail: the rank with the root's local rank, or on a smaller node
// the one at that local rank modulo the node's rank count) gathers its node's block sizes (a
// gather of one uint64 per rank), then the node's blocks, packed in node-rank order (a gatherv
// whose blocks it lays out from those sizes); the root gathers its own node's blocks straight to
// their places in recvbuf (it knows their sizes; the sizes still travel, every node alike). Both
// run an algorithm selected for the node's ranks (coll/select/selector.h selectNodeStep; the
// gatherv as a call of 0 bytes, as every gatherv is selected: by default through the node's
// shared memory where the node has a channel, else linearly on the node's SubTransport). A node
// of one rank has no node step: its block is its node buffer. Step 2: every other node's rail
// rank sends its node buffer to the root in one message (none when it is empty); the root, which
// knows every size and so every node buffer's, posts those receives before its own node step,
// each straight into recvbuf where recvBlocks holds the node's blocks back to back in node order
// (coll/math/block_runs.h), else into scratch, whose blocks it then copies to their places.
// Cost with N nodes: the node step (two rounds: sizes, then blocks) + N - 1 messages into the
// root: as many bytes cross the network as with a flat gatherv, in N - 1 messages instead of
// p - L (L: the ranks of the root's node).
// Preconditions: N >= 2 and some node holding 2 or more ranks (the registry's serves; a direct
// call on anything else declines, coll/algorithms.h); nodes may hold different numbers of ranks.
// Uses scratch slots kNodeBlocks (a rail rank's node buffer) and kWhole (the root's node buffers
// that are not in place), held across the node step's flat algorithms.
// Result: block q of rank q at recvbuf + recvBlocks.offset[q] at the root.
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

// The root's receives of the other nodes' buffers (rail rank j: node j), each in place in
// recvbuf where it can be, else into `staging` (set here, kWhole), in node order.
struct NodeBuffers {
  std::vector<P2POp> ops;
  std::vector<int> staged;  // the nodes received into staging, in order
  unsigned char* staging = nullptr;

  NodeBuffers(const CollArgs& args, Team& team, const Topology& topo, int rootNode) {
    const BlockLayout& b = args.recvBlocks;
    auto* out = static_cast<unsigned char*>(args.recvbuf);
    std::vector<std::optional<std::ptrdiff_t>> runs(topo.nodeCount());
    std::size_t total = 0;
    for (int j = 0; j < topo.nodeCount(); ++j) {
      if (j == rootNode) continue;
      const std::vector<int>& ranks = topo.nodeRanks(j);
      auto rankOf = [&ranks](int i) { return ranks[i]; };
      runs[j] = backToBack(b, topo.nodeSize(j), rankOf);
      if (!runs[j]) total += runBytes(b, topo.nodeSize(j), rankOf);
    }
    if (total) staging = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kWhole, total));
    std::size_t at = 0;
    for (int j = 0; j < topo.nodeCount(); ++j) {
      if (j == rootNode) continue;
      const std::vector<int>& ranks = topo.nodeRanks(j);
      const std::size_t bytes = runBytes(b, topo.nodeSize(j), [&ranks](int i) { return ranks[i]; });
      if (bytes == 0) continue;
      if (runs[j]) {
        ops.push_back(P2POp::recv(out + *runs[j], bytes, j));
        continue;
      }
      ops.push_back(P2POp::recv(staging + at, bytes, j));
      staged.push_back(j);
      at += bytes;
    }
  }

  // Every staged block to its place.
  void place(const CollArgs& args, const Topology& topo) const {
    const BlockLayout& b = args.recvBlocks;
    auto* out = static_cast<unsigned char*>(args.recvbuf);
    std::size_t at = 0;
    for (int j : staged)
      for (int q : topo.nodeRanks(j)) {
        if (b.bytes[q]) std::memcpy(out + b.offset[q], staging + at, b.bytes[q]);
        at += b.bytes[q];
      }
  }
};

}  // namespace

Status gathervHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  OVERPASS_TRACE("hierarchical gatherv over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodeSize = topo->nodeSize(node), rootNode = topo->nodeOf(args.root);
  const int rootLocal = topo->localRank(args.root), from = rootLocal % nodeSize;
  const int tag = static_cast<int>(args.coll);
  const bool isRoot = rank == args.root, onRail = local == from;
  SubTransport railTransport(team.transport, topo->fullRail(rootLocal));

  // The root's receives of the other nodes' buffers, in flight during its node step.
  std::optional<NodeBuffers> buffers;
  Transport::Request request;
  if (isRoot) {
    buffers.emplace(args, team, *topo, rootNode);
    if (!buffers->ops.empty()) OVERPASS_CHECK(railTransport.start(buffers->ops, tag, &request));
  }

  // Step 1: the node's blocks, in node order, to its rank on the rail (the root: in place).
  const unsigned char* nodeBuffer = static_cast<const unsigned char*>(args.sendbuf);
  std::size_t nodeBytes = args.bytes;
  Status status = Status::kOk;
  if (nodeSize == 1) {
    const BlockLayout& b = args.recvBlocks;
    auto* own = isRoot ? static_cast<unsigned char*>(args.recvbuf) + b.offset[rank] : nullptr;
    if (isRoot && args.bytes && own != args.sendbuf) std::memcpy(own, args.sendbuf, args.bytes);
  } else {
    SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
    Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
    nodeTeam.streamAbove = team.streamAbove;
    const std::vector<int>& members = topo->nodeRanks(node);
    std::vector<std::uint64_t> sizes(onRail ? nodeSize : 0);
    const std::uint64_t mine = args.bytes;
    CollArgs count = args;
    count.coll = Collective::kGather;
    count.sendbuf = &mine;
    count.recvbuf = sizes.data();
    count.bytes = count.count = sizeof mine;
    count.type = DataType::kByte;
    count.root = from;
    count.recvBlocks = {};
    static const Algorithm& gatherLinear = *findAlgorithm(Collective::kGather, "linear");
    status = selectNodeStep(team, count, nodeSize, gatherLinear).run(count, nodeTeam);

    std::vector<std::size_t> bytes(onRail ? nodeSize : 0);
    std::vector<std::ptrdiff_t> offset(onRail ? nodeSize : 0);
    CollArgs inNode = args;
    inNode.root = from;
    inNode.recvbuf = nullptr;
    inNode.recvBlocks = {};
    if (onRail && isRoot) {  // straight to their places
      for (int l = 0; l < nodeSize; ++l) {
        bytes[l] = args.recvBlocks.bytes[members[l]];
        offset[l] = args.recvBlocks.offset[members[l]];
      }
      inNode.recvbuf = args.recvbuf;
    } else if (onRail) {  // packed in node order
      nodeBytes = 0;
      for (int l = 0; l < nodeSize; ++l) {
        bytes[l] = static_cast<std::size_t>(sizes[l]);
        offset[l] = static_cast<std::ptrdiff_t>(nodeBytes);
        nodeBytes += bytes[l];
      }
      inNode.recvbuf = team.scratch.get(ScratchSlot::kNodeBlocks, nodeBytes);
      nodeBuffer = static_cast<const unsigned char*>(inNode.recvbuf);
    }
    if (onRail) inNode.recvBlocks = {bytes.data(), offset.data()};
    // Selected as every gatherv is, as a call of 0 bytes: the ranks' sizes differ.
    CollArgs shape = inNode;
    shape.bytes = shape.count = 0;
    static const Algorithm& linear = *findAlgorithm(Collective::kGatherv, "linear");
    if (status == Status::kOk)
      status = selectNodeStep(team, shape, nodeSize, linear).run(inNode, nodeTeam);
  }

  // Step 2: the node buffers to the root along the rail.
  if (isRoot) {
    if (request) {
      const Status s = railTransport.wait(request);
      if (status == Status::kOk) status = s;
    }
    if (status == Status::kOk) buffers->place(args, *topo);
    return status;
  }
  if (status != Status::kOk || !onRail || nodeBytes == 0) return status;
  return railTransport.send(nodeBuffer, nodeBytes, rootNode, tag);
}

}  // namespace overpass
