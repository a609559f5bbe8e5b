// Bcast across nodes in two steps: the root and one rank of every other node (the root's full
// rail, Topology::fullRail: the rank with the root's local rank, or on a smaller node the one at
// that local rank modulo the node's rank count) run a bcast among themselves, one copy of the
// message per node across the network (an algorithm selected for that many ranks, by default
// the binomial tree); then each of them broadcasts within its node (an algorithm selected for
// the node's ranks, coll/select/selector.h selectNodeStep: by default through the node's shared
// memory, docs/SHM.md, when the node has a channel, else along a binomial tree on the node's
// SubTransport); a node of one rank has no node step.
// Cost with N nodes of L ranks: ceil(log2 N)(alpha + n beta) between nodes + the node step
// (shared memory: one round and two copies per buffer-sized chunk).
// Preconditions: N >= 2 and some node holding 2 or more ranks (the registry's serves; a direct
// call on anything else declines, coll/algorithms.h). Result: recvbuf on every rank.
#include "coll/algorithms.h"
#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/log.h"
#include "transport/sub_transport.h"

namespace overpass {

Status bcastHierarchical(const CollArgs& args, Team& team) {
  const Topology* topo = team.topology;
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (args.bytes == 0) return Status::kOk;
  OVERPASS_TRACE("hierarchical bcast over %s", topo->summary().c_str());
  const int rank = team.rank(), node = topo->nodeOf(rank), local = topo->localRank(rank);
  const int nodeSize = topo->nodeSize(node), rootLocal = topo->localRank(args.root);
  const int from = rootLocal % nodeSize;  // this node's rank on the root's rail

  if (local == from) {  // between nodes, along the root's rail (ranks in node order)
    SubTransport railTransport(team.transport, topo->fullRail(rootLocal));
    Team railTeam{railTransport, team.scratch};
    CollArgs rail = args;
    rail.root = topo->nodeOf(args.root);
    static const Algorithm& binomial = *findAlgorithm(Collective::kBcast, "binomial");
    OVERPASS_CHECK(selectStep(team.selector, rail, railTeam.size(), binomial).run(rail, railTeam));
  }
  if (nodeSize == 1) return Status::kOk;

  // Within the node, from the rank of the root's rail.
  SubTransport nodeTransport(team.transport, topo->nodeRanks(node));
  Team nodeTeam{nodeTransport, team.scratch, team.nodeShm};
  CollArgs inNode = args;
  inNode.root = from;
  static const Algorithm& binomial = *findAlgorithm(Collective::kBcast, "binomial");
  return selectNodeStep(team, inNode, nodeSize, binomial).run(inNode, nodeTeam);
}

}  // namespace overpass
