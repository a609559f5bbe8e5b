// The job's topology: every world rank's Locality and node index. Probed and gathered once at
// initialisation (gatherJobTopology), or loaded from a file (OVERPASS_TOPO_FILE); the node index
// is virtual under emulation (OVERPASS_TOPO_RANKS_PER_NODE). Each communicator's Topology is
// derived from it by rank translation, without communication.
#pragma once

#include <string>
#include <vector>

#include "common/bootstrap.h"
#include "topo/locality.h"
#include "topo/topology.h"

namespace overpass {

struct JobTopology {
  std::vector<Locality> ranks;  // by world rank
  std::vector<int> node;        // node index by world rank

  RankPlace place(int worldRank) const {
    return {node[worldRank], ranks[worldRank].socket, ranks[worldRank].numa};
  }
  // The Topology of the ranks listed (world ranks, in communicator order).
  Topology topologyOf(const std::vector<int>& worldRanks) const;
  Topology world() const;
  // More ranks of the job on this rank's machine (same boot id, else same hostname) than it has
  // cores: waiting ranks should give their core away at once instead of spinning.
  bool oversubscribed(int worldRank) const;
};

// Node indices from hostnames (first appearance order). With ranksPerNode > 0, each real node's
// ranks are further split into virtual nodes of that many consecutive ranks (emulation).
std::vector<int> nodeIndices(const std::vector<Locality>& ranks, int ranksPerNode);

// Gathers every rank's Locality over the bootstrap (a collective over the world).
Status gatherLocalities(Bootstrap& bootstrap, const Locality& mine, std::vector<Locality>* all);

// The documented JSON form (docs/TOPOLOGY.md), and back. Errors name the source and the problem.
std::string topologyToJson(const JobTopology& job);
bool topologyFromJson(const std::string& text, const std::string& source, JobTopology* job,
                      std::string* error);

}  // namespace overpass
