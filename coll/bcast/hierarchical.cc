// Bcast across nodes in two steps: the root and the ranks with the root's local rank on every
// other node (the root's rail) run a bcast among themselves, one copy of the message per node
// across the network (an algorithm selected for that many ranks, by default the binomial tree);
// then each of them broadcasts within its node, through the node's shared memory (docs/SHM.md)
// when the node has a channel, else along a binomial tree on the node's SubTransport.
// Cost with N nodes of L ranks: ceil(log2 N)(alpha + n beta) between nodes + the node step
// (shared memory: one round and two copies per buffer-sized chunk).
// Preconditions: every node holds the same number of ranks L >= 2 and N >= 2 (the registry's
// serves); anything else runs the flat binomial bcast. Result: recvbuf on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/registry.h"
#include "coll/selector.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status bcastHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overEqualNodes(team)) return bcastBinomial(args, team);
  if (args.bytes == 0) return Status::kOk;
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int rootLocal = topo->localRank(args.root);

  if (local == rootLocal) {  // between nodes, along the root's rail (ranks in node order)
    SubTransport railTransport(team.transport, topo->rails()[rootLocal]);
    Team railTeam{railTransport, team.scratch};
    CollArgs rail = args;
    rail.root = topo->nodeOf(args.root);
    static const Algorithm& binomial = *findAlgorithm(Collective::kBcast, "binomial");
    OVERPASS_CHECK(selectStep(team.selector, rail, railTeam.size(), binomial).run(rail, railTeam));
  }

  if (team.nodeShm) {  // within the node, from the rank of the root's rail
    ShmChannel& ch = *team.nodeShm;
    auto* buf = static_cast<unsigned char*>(args.recvbuf);
    for (std::size_t off = 0; off < args.bytes; off += ch.bufferBytes()) {
      const std::size_t n = std::min(ch.bufferBytes(), args.bytes - off);
      if (local == rootLocal) {
        OVERPASS_CHECK(ch.reserve());
        std::memcpy(ch.next(), buf + off, n);
        OVERPASS_CHECK(ch.sync(local));
      } else {
        OVERPASS_CHECK(ch.sync(rootLocal));
        std::memcpy(buf + off, ch.peer(rootLocal), n);
      }
    }
    return Status::kOk;
  }
  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch};
  CollArgs inNode = args;
  inNode.root = rootLocal;
  return bcastBinomial(inNode, nodeTeam);
}

}  // namespace overpass
