#include "topo/job_topology.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace overpass {
namespace {

using nlohmann::ordered_json;

ordered_json localityJson(const Locality& l) {
  return {{"hostname", l.hostname}, {"numa", l.numa},        {"socket", l.socket},
          {"cpuset", l.cpuset},     {"bound", l.bound},      {"node_cores", l.nodeCores},
          {"pid", l.pid},           {"l3_bytes", l.l3Bytes}, {"gpus", l.gpus},
          {"nics", l.nics}};
}

// Reads the locality fields of `j` (all optional: a hand-written file may give only nodes).
Locality localityFrom(const nlohmann::json& j) {
  Locality l;
  l.hostname = j.value("hostname", std::string());
  l.numa = j.value("numa", -1);
  l.socket = j.value("socket", -1);
  l.cpuset = j.value("cpuset", std::string());
  l.bound = j.value("bound", false);
  l.nodeCores = j.value("node_cores", 0);
  l.pid = j.value("pid", 0);
  l.l3Bytes = clampCacheBytes(j.value("l3_bytes", std::size_t{0}));
  l.gpus = j.value("gpus", std::vector<std::string>());
  l.nics = j.value("nics", std::vector<std::string>());
  return l;
}

}  // namespace

Topology JobTopology::topologyOf(const std::vector<int>& worldRanks) const {
  std::vector<RankPlace> places;
  places.reserve(worldRanks.size());
  for (int w : worldRanks) places.push_back(place(w));
  return Topology::build(places);
}

Topology JobTopology::world() const {
  std::vector<int> all(ranks.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return topologyOf(all);
}

bool JobTopology::oversubscribed(int worldRank) const {
  const Locality& me = ranks[worldRank];
  const auto onMyHost = std::count_if(ranks.begin(), ranks.end(),
                                      [&](const Locality& l) { return l.hostname == me.hostname; });
  return me.nodeCores > 0 && onMyHost > me.nodeCores;
}

std::vector<int> nodeIndices(const std::vector<Locality>& ranks, int ranksPerNode) {
  std::map<std::string, int> hosts;        // hostname -> real node
  std::map<int, int> seenOnHost;           // real node -> ranks seen so far
  std::map<std::pair<int, int>, int> ids;  // (real node, virtual part) -> node index
  std::vector<int> node(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int host = hosts.emplace(ranks[r].hostname, static_cast<int>(hosts.size())).first->second;
    const int part = ranksPerNode > 0 ? seenOnHost[host]++ / ranksPerNode : 0;
    node[r] = ids.emplace(std::make_pair(host, part), static_cast<int>(ids.size())).first->second;
  }
  return node;
}

Status gatherLocalities(Bootstrap& bootstrap, const Locality& mine, std::vector<Locality>* all) {
  const std::string text = localityJson(mine).dump();
  // Records differ in length: agree on the longest, then gather fixed-size padded records.
  std::uint64_t length = text.size();
  std::vector<std::uint64_t> lengths(bootstrap.size());
  OVERPASS_CHECK(bootstrap.allgather(&length, lengths.data(), sizeof(length)));
  const std::size_t width = *std::max_element(lengths.begin(), lengths.end());
  std::vector<char> padded(width, ' '), gathered(width * bootstrap.size());
  std::memcpy(padded.data(), text.data(), text.size());
  OVERPASS_CHECK(bootstrap.allgather(padded.data(), gathered.data(), width));
  all->clear();
  for (int r = 0; r < bootstrap.size(); ++r) {
    const auto j = nlohmann::json::parse(gathered.begin() + r * width,
                                         gathered.begin() + r * width + lengths[r], nullptr,
                                         /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::kInternal;
    all->push_back(localityFrom(j));
  }
  return Status::kOk;
}

std::string topologyToJson(const JobTopology& job) {
  const Topology world = job.world();
  ordered_json ranks = ordered_json::array();
  for (int r = 0; r < world.size(); ++r) {
    ordered_json entry = {{"rank", r}, {"node", job.node[r]}, {"local_rank", world.localRank(r)}};
    entry.update(localityJson(job.ranks[r]));
    ranks.push_back(entry);
  }
  ordered_json root = {
      {"summary", world.summary()},
      {"ranks", ranks},
      {"groups",
       {{"nodes", world.nodes()},
        {"leaders", world.leaders()},
        {"rails", world.rails()},
        {"numa", world.numaGroups()},
        {"sockets", world.socketGroups()}}},
      {"balanced", world.balanced()},
      {"contiguous", world.contiguous()},
  };
  return root.dump(2) + "\n";
}

bool topologyFromJson(const std::string& text, const std::string& source, JobTopology* job,
                      std::string* error) {
  auto fail = [&](const std::string& problem) {
    *error = "topology file '" + source + "': " + problem;
    return false;
  };
  const auto root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return fail("not valid JSON");
  if (!root.is_object() || !root.contains("ranks") || !root["ranks"].is_array())
    return fail("no \"ranks\" array");
  const auto& ranks = root["ranks"];
  if (ranks.empty()) return fail("\"ranks\" is empty");
  job->ranks.assign(ranks.size(), Locality{});
  job->node.assign(ranks.size(), -1);
  std::set<int> seen;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto& entry = ranks[i];
    const std::string where = "ranks[" + std::to_string(i) + "]";
    if (!entry.is_object()) return fail(where + " is not an object");
    if (!entry.contains("rank") || !entry["rank"].is_number_integer())
      return fail(where + " has no integer \"rank\"");
    if (!entry.contains("node") || !entry["node"].is_number_integer())
      return fail(where + " has no integer \"node\"");
    const int rank = entry["rank"].get<int>(), node = entry["node"].get<int>();
    if (rank < 0 || rank >= static_cast<int>(ranks.size()) || !seen.insert(rank).second)
      return fail(where + ": rank " + std::to_string(rank) +
                  " is out of range or repeated (ranks must be 0.." +
                  std::to_string(ranks.size() - 1) + ", each once)");
    if (node < 0) return fail(where + ": negative node");
    try {
      job->ranks[rank] = localityFrom(entry);
    } catch (const nlohmann::json::exception& e) {
      return fail(where + ": " + e.what());
    }
    job->node[rank] = node;
  }
  return true;
}

}  // namespace overpass
