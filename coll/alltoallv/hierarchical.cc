// Alltoallv across nodes with the small blocks aggregated, so that one message per pair of ranks
// (A, l) -> (B, j) crosses between nodes instead of one per pair of ranks sending to each other.
//
// Rank l of node A (of L_A ranks) forwards to the ranks j = l, l + L_A, l + 2 L_A, ... of every
// other node B the small blocks that its node's ranks send them. Steps:
//   1. Node round (the node's shared memory, team.nodeShm): rank m of node A writes into slot l
//      of its buffer, for every other rank l of its node, its small block for (A, l) and its
//      small blocks for the ranks rank l forwards to, after a header with the sizes of the latter
//      (rank l knows only what it receives itself).
//   2. Between nodes: rank l packs, for each rank (B, j) it forwards to, the blocks of its node's
//      ranks for (B, j) in node-rank order (its own straight from sendbuf) and sends them as one
//      message; rank (B, j) receives one message from rank j mod L_A of every other node A, whose
//      size and layout it knows: its receive counts from the ranks of A. Meanwhile it copies its
//      node's blocks for it out of the slots; then it unpacks.
//   3. The large blocks pairwise (step s: to rank + s, from rank - s), two steps in flight, the
//      first posted before step 1 so that it travels meanwhile. Across hosts (2 x 2, 1 Gbit/s):
//      all large blocks posted at once (Open MPI's linear alltoallv) contend for the link (0.73x
//      Open MPI at 64 KiB blocks), one step at a time leaves a link idle one way when a rank
//      sends more than it receives (0.56x with one rank's blocks 10x), two steps 1.2-1.5x; and
//      the large blocks after steps 1-2 made a mix of small and large blocks 0.8x.
// A rank alone on its node has no slots: it forwards its own blocks.
// Each rank knows only its own counts, so no count is exchanged between nodes: a block is small
// when it has 1..upTo bytes, which sender and receiver both know (their counts match), and upTo
// is computed alike on every rank from the topology and the node channels' buffer size.
// Cost with N nodes of L ranks, all blocks small: one shared-memory round, then N - 1 messages
// from and to each rank of L blocks each (instead of (N - 1) L of one block), plus the copies in
// and out of the slots and the packing. Preconditions: N >= 2, some node of 2 or more ranks, and
// node channels (Team::nodeShmBuffer); elsewhere it declines alike on every rank. Sendbuf and
// recvbuf do not overlap (the shim passes a copy in place). Uses scratch slots kBlocks (outgoing
// messages) and kIncoming (incoming ones).
// Result: block q of rank r's send blocks at block r of rank q's receive blocks.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/phases/windowed_exchange.h"
#include "common/log.h"

namespace overpass {
namespace {

// The layout every rank computes alike from the topology and the node channels' buffer size.
struct Plan {
  std::size_t slot = 0;    // bytes of one reader's slot in a rank's buffer
  std::size_t header = 0;  // bytes of a slot's header: the sizes of its blocks for other nodes
  std::size_t upTo = 0;    // blocks of 1..upTo bytes are aggregated, larger ones go directly
  bool small(std::size_t bytes) const { return bytes != 0 && bytes <= upTo; }
};

Plan planFor(const Topology& t, std::size_t buffer) {
  int fewest = t.maxRanksPerNode();
  for (int b = 0; b < t.nodeCount(); ++b) fewest = std::min(fewest, t.nodeSize(b));
  const int most = t.maxRanksPerNode();
  // A rank forwards to at most ceil(most / fewest) ranks of each other node; a slot holds their
  // blocks and the block for the reader itself.
  const std::size_t forwarded =
      static_cast<std::size_t>(t.nodeCount() - 1) * ((most + fewest - 1) / fewest);
  Plan p;
  p.slot = buffer / static_cast<std::size_t>(most) / 64 * 64;
  p.header = (forwarded * sizeof(std::uint32_t) + 63) / 64 * 64;
  if (p.slot > p.header)
    p.upTo = std::min(kAlltoallvAggregateUpTo, (p.slot - p.header) / (forwarded + 1));
  return p;
}

// The team ranks that rank `local` of node `node` forwards to: ranks local, local + L, ... of
// every other node in node order (L: the ranks of `node`).
std::vector<int> forwardedBy(const Topology& t, int node, int local) {
  std::vector<int> out;
  const int stride = t.nodeSize(node);
  for (int b = 0; b < t.nodeCount(); ++b)
    if (b != node)
      for (int j = local; j < t.nodeSize(b); j += stride) out.push_back(t.nodeRanks(b)[j]);
  return out;
}

// Steps 1 and 2: the small blocks, through the node round and one message per rank forwarded to.
Status forwardSmall(const CollArgs& args, Team& team, const Plan& plan) {
  const Topology& topo = *team.topology;
  const int rank = team.rank(), node = topo.nodeOf(rank), local = topo.localRank(rank);
  const std::vector<int>& mates = topo.nodeRanks(node);
  const int nodeSize = static_cast<int>(mates.size());
  const BlockLayout &sb = args.sendBlocks, &rb = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const int tag = static_cast<int>(args.coll);
  // 1. The node round: slot l of this rank's buffer for node rank l (its own slot stays empty).
  ShmChannel* ch = nodeSize >= 2 ? team.nodeShm : nullptr;
  if (ch) {
    OVERPASS_CHECK(ch->reserve());
    for (int l = 0; l < nodeSize; ++l) {
      if (l == local) continue;
      unsigned char* slot = ch->next(ShmChannel::kLines) + l * plan.slot;
      unsigned char* at = slot + plan.header;
      const int mate = mates[l];
      if (plan.small(sb.bytes[mate])) {
        std::memcpy(at, in + sb.offset[mate], sb.bytes[mate]);
        at += sb.bytes[mate];
      }
      const std::vector<int> to = forwardedBy(topo, node, l);
      for (std::size_t e = 0; e < to.size(); ++e) {
        const std::size_t bytes = sb.bytes[to[e]];
        const auto size = static_cast<std::uint32_t>(plan.small(bytes) ? bytes : 0);
        std::memcpy(slot + e * sizeof size, &size, sizeof size);
        std::memcpy(at, in + sb.offset[to[e]], size);
        at += size;
      }
    }
    OVERPASS_CHECK(ch->sync());
  }

  // 2. What this rank forwards: where each node rank's blocks start in its slot for this rank.
  const std::vector<int> to = forwardedBy(topo, node, local);
  std::vector<const unsigned char*> cursor(nodeSize);
  for (int m = 0; m < nodeSize; ++m) {
    if (m == local) continue;
    cursor[m] = ch->peer(m, ShmChannel::kLines) + local * plan.slot + plan.header;
    if (plan.small(rb.bytes[mates[m]])) cursor[m] += rb.bytes[mates[m]];
  }
  auto sizeFrom = [&](int m, std::size_t e) -> std::size_t {
    if (m == local) return plan.small(sb.bytes[to[e]]) ? sb.bytes[to[e]] : 0;
    std::uint32_t size = 0;
    std::memcpy(&size, ch->peer(m, ShmChannel::kLines) + local * plan.slot + e * sizeof size,
                sizeof size);
    return size;
  };
  std::vector<std::size_t> outBytes(to.size(), 0);
  std::size_t outTotal = 0;
  for (std::size_t e = 0; e < to.size(); ++e) {
    for (int m = 0; m < nodeSize; ++m) outBytes[e] += sizeFrom(m, e);
    outTotal += outBytes[e];
  }
  // What this rank receives: from rank local mod L_b of every other node b, the small blocks of
  // b's ranks for it, in node-rank order.
  std::vector<std::size_t> inBytes(topo.nodeCount(), 0);
  std::size_t inTotal = 0;
  for (int b = 0; b < topo.nodeCount(); ++b)
    if (b != node) {
      for (int q : topo.nodeRanks(b))
        if (plan.small(rb.bytes[q])) inBytes[b] += rb.bytes[q];
      inTotal += inBytes[b];
    }
  auto* packed = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, outTotal));
  auto* incoming = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, inTotal));
  std::vector<P2POp> ops;
  ops.reserve(to.size() + topo.nodeCount());
  unsigned char* at = incoming;
  for (int b = 0; b < topo.nodeCount(); ++b)
    if (inBytes[b]) {
      const std::vector<int>& from = topo.nodeRanks(b);
      ops.push_back(P2POp::recv(at, inBytes[b], from[local % static_cast<int>(from.size())]));
      at += inBytes[b];
    }
  at = packed;
  for (std::size_t e = 0; e < to.size(); ++e) {
    if (!outBytes[e]) continue;
    ops.push_back(P2POp::send(at, outBytes[e], to[e]));
    for (int m = 0; m < nodeSize; ++m) {
      const std::size_t size = sizeFrom(m, e);
      const unsigned char* from = m == local ? in + sb.offset[to[e]] : cursor[m];
      std::memcpy(at, from, size);
      at += size;
      if (m != local) cursor[m] += size;
    }
  }
  Transport::Request request;
  if (!ops.empty()) OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  // The node's small blocks for this rank, out of the slots, and its own block.
  for (int m = 0; m < nodeSize; ++m) {
    const int q = mates[m];
    if (m != local && plan.small(rb.bytes[q]))
      std::memcpy(out + rb.offset[q],
                  ch->peer(m, ShmChannel::kLines) + local * plan.slot + plan.header, rb.bytes[q]);
  }
  if (rb.bytes[rank]) std::memcpy(out + rb.offset[rank], in + sb.offset[rank], rb.bytes[rank]);
  if (!ops.empty()) OVERPASS_CHECK(team.transport.wait(request));
  at = incoming;
  for (int b = 0; b < topo.nodeCount(); ++b)
    if (b != node)
      for (int q : topo.nodeRanks(b))
        if (plan.small(rb.bytes[q])) {
          std::memcpy(out + rb.offset[q], at, rb.bytes[q]);
          at += rb.bytes[q];
        }
  return Status::kOk;
}

}  // namespace

Status alltoallvHierarchical(const CollArgs& args, Team& team) {
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (team.nodeShmBuffer == 0)
    return decline(args.coll, "hierarchical", "the nodes have no shared-memory channels");
  const Plan plan = planFor(*team.topology, team.nodeShmBuffer);
  OVERPASS_TRACE("hierarchical alltoallv over %s: blocks up to %zu bytes aggregated",
                 team.topology->summary().c_str(), plan.upTo);
  // 3: the large blocks pairwise, two steps in flight (each side of a block knows it is large),
  // the first step posted before steps 1 and 2 so that it travels meanwhile.
  const int rank = team.rank(), p = team.size();
  const BlockLayout &sb = args.sendBlocks, &rb = args.recvBlocks;
  return windowedExchange<1>(
      team, static_cast<int>(args.coll),
      [&](int t, P2POp* ops) {
        const int to = (rank + t) % p, from = (rank - t + p) % p;
        std::size_t n = 0;
        if (rb.bytes[from] && !plan.small(rb.bytes[from]))
          ops[n++] = P2POp::recv(static_cast<unsigned char*>(args.recvbuf) + rb.offset[from],
                                 rb.bytes[from], from);
        if (sb.bytes[to] && !plan.small(sb.bytes[to]))
          ops[n++] = P2POp::send(static_cast<const unsigned char*>(args.sendbuf) + sb.offset[to],
                                 sb.bytes[to], to);
        return n;
      },
      [&] { return forwardSmall(args, team, plan); });
}

}  // namespace overpass
