#include "topo/job_topology.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace overpass {
namespace {

using nlohmann::ordered_json;

ordered_json localityJson(const Locality& l) {
  return {{"hostname", l.hostname},
          {"machine", l.machine},
          {"numa", l.numa},
          {"socket", l.socket},
          {"cpuset", l.cpuset},
          {"bound", l.bound},
          {"node_cores", l.nodeCores},
          {"pid", l.pid},
          {"l3_bytes", l.l3Bytes},
          {"gpus", l.gpus},
          {"nics", l.nics}};
}

// Reads the fields of a topology file's entries, each checked for its type and range; a problem
// names the field ("ranks[3].node: ..."). Fields that are absent keep their value.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& entry, std::string where, std::string* problem)
      : entry_(entry), where_(std::move(where)), problem_(problem) {}

  bool has(const char* field) const { return entry_.contains(field); }

  bool integer(const char* field, std::int64_t lo, std::int64_t hi, std::int64_t* out) {
    if (!has(field)) return true;
    const auto& v = entry_[field];
    const std::string range = " from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (!v.is_number_integer()) return fail(field, "must be an integer" + range + typeOf(v));
    // JSON integers beyond int64 are unsigned ones.
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
                               : v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      return fail(field, v.dump() + " is out of range: must be an integer" + range);
    *out = v.get<std::int64_t>();
    return true;
  }
  bool integer(const char* field, int lo, int hi, int* out) {
    std::int64_t value = *out;
    if (!integer(field, std::int64_t{lo}, std::int64_t{hi}, &value)) return false;
    *out = static_cast<int>(value);
    return true;
  }

  bool text(const char* field, std::string* out) {
    if (!has(field)) return true;
    const auto& v = entry_[field];
    if (!v.is_string()) return fail(field, "must be a string" + typeOf(v));
    *out = v.get<std::string>();
    return true;
  }

  bool boolean(const char* field, bool* out) {
    if (!has(field)) return true;
    const auto& v = entry_[field];
    if (!v.is_boolean()) return fail(field, "must be true or false" + typeOf(v));
    *out = v.get<bool>();
    return true;
  }

  bool texts(const char* field, std::vector<std::string>* out) {
    if (!has(field)) return true;
    const auto& v = entry_[field];
    if (!v.is_array()) return fail(field, "must be an array of strings" + typeOf(v));
    out->clear();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        return fail(field, "[" + std::to_string(i) + "] must be a string" + typeOf(v[i]), "");
      out->push_back(v[i].get<std::string>());
    }
    return true;
  }

 private:
  static std::string typeOf(const nlohmann::json& v) {
    const char* type = v.is_number()    ? "a number"
                       : v.is_string()  ? "a string"
                       : v.is_boolean() ? "a boolean"
                       : v.is_array()   ? "an array"
                       : v.is_object()  ? "an object"
                                        : "null";
    return std::string(" (it is ") + type + ")";
  }
  bool fail(const char* field, const std::string& what, const char* separator = ": ") {
    *problem_ = where_ + "." + field + separator + what;
    return false;
  }

  const nlohmann::json& entry_;
  std::string where_;
  std::string* problem_;
};

constexpr int kMaxInt = std::numeric_limits<int>::max();

// Reads the locality fields of `j` (all optional: a hand-written file may give only nodes).
bool localityFrom(const nlohmann::json& j, const std::string& where, Locality* l,
                  std::string* problem) {
  FieldReader read(j, where, problem);
  std::int64_t l3Bytes = 0;
  const bool ok = read.text("hostname", &l->hostname) && read.text("machine", &l->machine) &&
                  read.integer("numa", -1, kMaxInt, &l->numa) &&
                  read.integer("socket", -1, kMaxInt, &l->socket) &&
                  read.text("cpuset", &l->cpuset) && read.boolean("bound", &l->bound) &&
                  read.integer("node_cores", 0, kMaxInt, &l->nodeCores) &&
                  read.integer("pid", 0, kMaxInt, &l->pid) &&
                  read.integer("l3_bytes", std::int64_t{0}, std::int64_t{1} << 50, &l3Bytes) &&
                  read.texts("gpus", &l->gpus) && read.texts("nics", &l->nics);
  l->l3Bytes = clampCacheBytes(static_cast<std::size_t>(l3Bytes));
  return ok;
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
  const auto sameMachine = [&](const Locality& l) {
    return me.machine.empty() || l.machine.empty() ? l.hostname == me.hostname
                                                   : l.machine == me.machine;
  };
  const auto onMyMachine = std::count_if(ranks.begin(), ranks.end(), sameMachine);
  return me.nodeCores > 0 && onMyMachine > me.nodeCores;
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
    Locality l;
    std::string problem;
    if (j.is_discarded() || !localityFrom(j, "rank " + std::to_string(r), &l, &problem))
      return Status::kInternal;
    all->push_back(std::move(l));
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
  const int last = static_cast<int>(std::min<std::size_t>(ranks.size(), kMaxInt) - 1);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto& entry = ranks[i];
    const std::string where = "ranks[" + std::to_string(i) + "]";
    if (!entry.is_object()) return fail(where + " is not an object");
    if (!entry.contains("rank") || !entry["rank"].is_number_integer())
      return fail(where + " has no integer \"rank\"");
    if (!entry.contains("node") || !entry["node"].is_number_integer())
      return fail(where + " has no integer \"node\"");
    std::string problem;
    FieldReader read(entry, where, &problem);
    int rank = 0, node = 0;
    if (!read.integer("rank", 0, last, &rank) || !read.integer("node", 0, kMaxInt, &node))
      return fail(problem);
    if (!seen.insert(rank).second)
      return fail(where + ".rank: rank " + std::to_string(rank) +
                  " is repeated (ranks must be 0.." + std::to_string(last) + ", each once)");
    Locality l;
    if (!localityFrom(entry, where, &l, &problem)) return fail(problem);
    job->ranks[rank] = std::move(l);
    job->node[rank] = node;
  }
  return true;
}

}  // namespace overpass
