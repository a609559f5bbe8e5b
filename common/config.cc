#include "common/config.h"

#include <optional>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

extern char** environ;

namespace overpass {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// 1: true, 0: false, -1: not a boolean.
int parseBoolText(std::string_view value) {
  const std::string v = lower(trim(value));
  if (v == "1" || v == "yes" || v == "true" || v == "on" || v == "y") return 1;
  if (v == "0" || v == "no" || v == "false" || v == "off" || v == "n") return 0;
  return -1;
}

bool parseDisable(std::string_view value, Config& config) {
  const int b = parseBoolText(value);
  config.disable = b == 1;
  return b >= 0;
}

bool parseColls(std::string_view value, Config& config) {
  std::string_view v = trim(value);
  const bool exclude = !v.empty() && v.front() == '^';
  if (exclude) v.remove_prefix(1);
  std::bitset<kNumCollectives> listed;
  while (!v.empty()) {
    const std::size_t comma = v.find(',');
    const std::string name = lower(trim(v.substr(0, comma)));
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    if (name == "all") {
      listed.set();
    } else if (auto c = collectiveFromName(name)) {
      listed.set(index(*c));
    } else if (!(name == "none" && !exclude)) {
      return false;
    }
  }
  config.colls = exclude ? ~listed : listed;
  return true;
}

bool parseLog(std::string_view value, Config& config) {
  auto level = logLevelFromName(lower(trim(value)));
  if (!level) return false;
  config.logLevel = *level;
  return true;
}

// A free-form text variable (a file path): any value is accepted, blanks around it dropped.
template <std::string Config::*kMember>
bool parseText(std::string_view value, Config& config) {
  config.*kMember = std::string(trim(value));
  return true;
}

bool parseStats(std::string_view value, Config& config) {
  const std::string_view v = trim(value);
  const int b = v.empty() ? 0 : parseBoolText(v);
  config.statsMode = b == 0 ? StatsMode::kOff : b == 1 ? StatsMode::kTable : StatsMode::kJson;
  config.statsPath = b < 0 ? std::string(v) : std::string();
  return true;
}

bool parseRanksPerNode(std::string_view value, Config& config) {
  const std::string_view v = trim(value);
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  config.topoRanksPerNode = std::stoi(std::string(v));
  return true;
}

bool parseTransport(std::string_view value, Config& config) {
  const std::string v = lower(trim(value));
  if (v != "ucx" && v != "pmpi") return false;
  config.transport = v == "ucx" ? TransportKind::kUcx : TransportKind::kPmpi;
  return true;
}

bool parseTimeout(std::string_view value, Config& config) {
  const std::string v(trim(value));
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(seconds >= 0) || seconds > 1e6) return false;
  config.timeoutSeconds = seconds;
  return true;
}

bool parseRndvThresh(std::string_view value, Config& config) {
  const std::string v = lower(trim(value));
  std::size_t digits = v.find_first_not_of("0123456789");
  const bool size =
      digits > 0 && digits != std::string::npos
          ? v.substr(digits) == "k" || v.substr(digits) == "m" || v.substr(digits) == "g"
          : digits == std::string::npos && !v.empty();
  if (!(v.empty() || v == "auto" || size)) return false;
  config.ucxRndvThresh = v;
  return true;
}

// A size: digits with an optional K or M suffix (x1024); 0, or within [lo, hi].
std::optional<std::size_t> parseSizeWithin(std::string_view value, std::size_t lo, std::size_t hi) {
  const std::string v = lower(trim(value));
  const std::size_t digits = v.find_first_not_of("0123456789");
  if (v.empty() || digits == 0 || v.size() > 9) return std::nullopt;
  std::size_t bytes = std::stoul(v.substr(0, digits));
  const std::string unit = digits == std::string::npos ? "" : v.substr(digits);
  if (unit == "k")
    bytes <<= 10;
  else if (unit == "m")
    bytes <<= 20;
  else if (!unit.empty())
    return std::nullopt;
  if (bytes != 0 && (bytes < lo || bytes > hi)) return std::nullopt;
  return bytes;
}

// A size of 0 or 4K-64M into a Config member.
template <std::size_t Config::*kMember>
bool parseBufferSize(std::string_view value, Config& config) {
  const auto bytes = parseSizeWithin(value, 4096, std::size_t{64} << 20);
  if (bytes) config.*kMember = *bytes;
  return bytes.has_value();
}

bool parseCommWarmUp(std::string_view value, Config& config) {
  const std::string_view v = trim(value);
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  config.commWarmUp = static_cast<unsigned>(std::stoul(std::string(v)));
  return true;
}

bool parseGpuDepth(std::string_view value, Config& config) {
  const std::string_view v = trim(value);
  if (v.size() != 1 || v[0] < '2' || v[0] > '8') return false;
  config.gpuDepth = v[0] - '0';
  return true;
}

// A 0|1 variable.
template <bool Config::*kFlag>
bool parseFlag(std::string_view value, Config& config) {
  const int b = parseBoolText(value);
  config.*kFlag = b == 1;
  return b >= 0;
}

// OVERPASS_<COLLECTIVE>=name: one algorithm for every call of the collective (the name is checked
// against the registry when the selector is built). Empty: no override.
template <Collective kColl>
bool parseForced(std::string_view value, Config& config) {
  const std::string v = lower(trim(value));
  if (v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    return false;
  config.forced[index(kColl)] = v;
  return true;
}

// A number followed by one of `units` (name, multiplier).
bool parseQuantity(std::string_view text,
                   std::initializer_list<std::pair<std::string_view, double>> units, double* out) {
  const std::string_view t = trim(text);
  double number = 0;  // from_chars: independent of the application's locale
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), number);
  if (ec != std::errc() || !(number > 0) || number > 1e15) return false;
  const std::string_view unit(end, static_cast<std::size_t>(t.data() + t.size() - end));
  for (const auto& [name, multiplier] : units)
    if (unit == name) {
      *out = number * multiplier;
      return true;
    }
  return false;
}

constexpr std::string_view kCostModelDefault = "latency=2us,bandwidth=6GB/s,reduce=8GB/s";

bool parseCostModel(std::string_view value, Config& config) {
  // Keys the value does not name keep their defaults.
  if (value != kCostModelDefault && !parseCostModel(kCostModelDefault, config)) return false;
  std::string_view v = trim(value);
  double latency = config.costLatency, bandwidth = config.costBandwidth,
         reduce = config.costReduceBandwidth;
  const std::initializer_list<std::pair<std::string_view, double>> time = {
      {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  const std::initializer_list<std::pair<std::string_view, double>> rate = {{"GB/s", 1e9},
                                                                           {"MB/s", 1e6}};
  std::vector<std::string_view> seen;
  while (!v.empty()) {
    const std::size_t comma = v.find(',');
    const std::string_view item = trim(v.substr(0, comma));
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    if (comma != std::string_view::npos && trim(v).empty()) return false;  // trailing comma
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = trim(item.substr(0, eq));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return false;  // a key twice
    seen.push_back(key);
    const std::string_view number = item.substr(eq + 1);
    const bool ok = key == "latency"     ? parseQuantity(number, time, &latency)
                    : key == "bandwidth" ? parseQuantity(number, rate, &bandwidth)
                    : key == "reduce"    ? parseQuantity(number, rate, &reduce)
                                         : false;
    if (!ok) return false;
  }
  config.costLatency = latency;
  config.costBandwidth = bandwidth;
  config.costReduceBandwidth = reduce;
  return true;
}

#define OVERPASS_FORCED_VAR(NAME, name, Coll)                                              \
  ConfigVar {                                                                              \
    "OVERPASS_" NAME, "", "an algorithm of " name " (overpass-info lists them), or empty", \
        "Use this algorithm for every " name " call it can serve: the rule '" name         \
        ":@ALGORITHM', above every OVERPASS_TUNE rule.",                                   \
        true, parseForced<Collective::k##Coll>                                             \
  }

constexpr std::array kVars = {
    ConfigVar{"OVERPASS_DISABLE", "0", "0|1 (also yes|no, true|false, on|off)",
              "Pass every call straight to the MPI library underneath (for A/B comparisons).", true,
              parseDisable},
    ConfigVar{"OVERPASS_COLLS", "all",
              "all, none, or a comma-separated list of allreduce, bcast, scatter, gather, "
              "alltoall, reduce, allgather, reduce_scatter_block, barrier; a leading ^ excludes "
              "the listed ones",
              "Collectives Overpass handles; the others go to the MPI library untouched.", true,
              parseColls},
    ConfigVar{"OVERPASS_LOG", "warn", "error|warn|info|debug|trace",
              "Log level: info shows what was detected and chosen once per communicator, debug "
              "every fallback and its reason, trace every call.",
              false, parseLog},
    ConfigVar{"OVERPASS_LOG_FILE", "", "a file path; %r is replaced by the world rank",
              "Write log lines to this file instead of stderr.", false,
              parseText<&Config::logFile>},
    ConfigVar{"OVERPASS_STATS", "0", "0, 1, or a file path",
              "1: print a per-collective table (calls, bytes, time, algorithms, fallbacks) to "
              "stderr on rank 0 at MPI_Finalize; a path: write the same as JSON to that file.",
              true, parseStats},
    ConfigVar{"OVERPASS_TOPO_DUMP", "", "a file path",
              "Write the job's topology as JSON (docs/TOPOLOGY.md) to this file, once, from rank 0 "
              "at MPI_Init.",
              false, parseText<&Config::topoDump>},
    ConfigVar{"OVERPASS_TOPO_FILE", "", "a file path",
              "Load the job's topology from this JSON file (as OVERPASS_TOPO_DUMP writes it) "
              "instead of probing the machine: for tests and for reproducing a user's machine.",
              true, parseText<&Config::topoFile>},
    ConfigVar{"OVERPASS_TOPO_RANKS_PER_NODE", "0", "0 (off) or a number of ranks",
              "Emulate nodes: split each machine's ranks into virtual nodes of this many "
              "consecutive ranks, so hierarchical paths run on one machine.",
              true, parseRanksPerNode},
    ConfigVar{"OVERPASS_TRANSPORT", "pmpi", "pmpi|ucx",
              "How Overpass's algorithms move bytes: over the MPI library's point-to-point calls "
              "on a private communicator (pmpi), or over Overpass's own UCX context (ucx; if UCX "
              "cannot start on some rank, every rank uses pmpi). See docs/PERFORMANCE.md for why "
              "pmpi is the default today.",
              true, parseTransport},
    ConfigVar{"OVERPASS_TIMEOUT", "0", "seconds (0: off)",
              "Abort a collective that makes no progress for this long, with a report of the "
              "collective, the communicator and the ranks not heard from.",
              false, parseTimeout},
    ConfigVar{"OVERPASS_UCX_RNDV_THRESH", "", "a size (e.g. 8K, 1M), auto, or empty for UCX's",
              "Message size from which Overpass's UCX context switches to zero-copy rendezvous; "
              "the application's own UCX settings are not changed.",
              false, parseRndvThresh},
    ConfigVar{"OVERPASS_SHM_BUFFER", "128K", "0 (off) or a size from 4K to 64M (K, M suffixes)",
              "Bytes per rank and round of the node shared-memory engine (each rank of a "
              "single-node communicator maps two such buffers per rank); 0 turns the engine "
              "off.",
              true, parseBufferSize<&Config::shmBuffer>},
    ConfigVar{"OVERPASS_COMM_WARMUP", "3", "0 to 999999 calls",
              "Calls on a new communicator (other than MPI_COMM_WORLD) handed to the MPI library "
              "before Overpass sets up its own state for it, so that short-lived communicators "
              "cost little; a call of 64 KiB or more, or an order-sensitive reduction in "
              "deterministic mode, ends the warm-up at once (docs/ARCHITECTURE.md). 0: set up "
              "at the first call.",
              true, parseCommWarmUp},
    ConfigVar{"OVERPASS_TUNE", "", "rules collective[:LO-HI][:np=LO-HI]:@algorithm joined by #",
              "Algorithm selection rules, e.g. allreduce:0-8K:@recursive_doubling#bcast:@binomial "
              "(docs/TUNING.md). Later rules win; calls no rule covers are decided by the "
              "built-in rules, then by the cost model.",
              true, parseText<&Config::tune>},
    OVERPASS_FORCED_VAR("ALLREDUCE", "allreduce", Allreduce),
    OVERPASS_FORCED_VAR("BCAST", "bcast", Bcast),
    OVERPASS_FORCED_VAR("SCATTER", "scatter", Scatter),
    OVERPASS_FORCED_VAR("GATHER", "gather", Gather),
    OVERPASS_FORCED_VAR("ALLTOALL", "alltoall", Alltoall),
    OVERPASS_FORCED_VAR("REDUCE", "reduce", Reduce),
    OVERPASS_FORCED_VAR("ALLGATHER", "allgather", Allgather),
    OVERPASS_FORCED_VAR("REDUCE_SCATTER_BLOCK", "reduce_scatter_block", ReduceScatterBlock),
    OVERPASS_FORCED_VAR("BARRIER", "barrier", Barrier),
    ConfigVar{"OVERPASS_DETERMINISTIC", "0", "0|1",
              "Floating-point and user-defined reductions combine the ranks' contributions in "
              "rank order, element by element, whatever the algorithm: repeated runs give the "
              "same bits (docs/TUNING.md says what is guaranteed).",
              true, parseFlag<&Config::deterministic>},
    ConfigVar{"OVERPASS_GPU_CHUNK", "1M", "0 (off) or a size from 4K to 64M (K, M suffixes)",
              "Allreduce and reduce of at least two chunks on a communicator where device "
              "buffers can occur run chunk by chunk, copies of neighbouring chunks overlapping "
              "the work on host memory (docs/GPU.md); 0: whole buffers staged at once.",
              true, parseBufferSize<&Config::gpuChunk>},
    ConfigVar{"OVERPASS_GPU_DEPTH", "3", "2 to 8",
              "Chunks of that pipeline in host memory per direction: 3 lets the copy up of the "
              "next chunk, the work on this one and the copy down of the previous one run at "
              "once.",
              false, parseGpuDepth},
    ConfigVar{"OVERPASS_GPU_IPC", "1", "0|1",
              "Allreduce, bcast and alltoall among the ranks of one node whose buffers are all "
              "on a device exchange them through CUDA IPC and reduce on the device, where the "
              "ranks agree that they can (docs/GPU.md); 0: always through host memory.",
              true, parseFlag<&Config::gpuIpc>},
    ConfigVar{"OVERPASS_SIM_DEVICE", "0", "0|1",
              "Tests only: treat the simulated device window of gpu/sim_device.h as GPU memory "
              "(staged like cudaMalloc'd buffers), so the device path runs without a GPU "
              "(docs/GPU.md).",
              false, parseFlag<&Config::simulatedDevice>},
    ConfigVar{"OVERPASS_COST_MODEL", kCostModelDefault,
              "comma-separated latency=TIME (ns|us|ms|s), bandwidth=RATE, reduce=RATE "
              "(GB/s|MB/s); unnamed keys keep their defaults",
              "The alpha-beta cost model that picks an algorithm where no rule does: time per "
              "message, bytes per second sent, bytes per second reduced.",
              true, parseCostModel},
};

#undef OVERPASS_FORCED_VAR

}  // namespace

std::span<const ConfigVar> configVars() {
  return kVars;
}

Environment processEnvironment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    if (entry.rfind("OVERPASS_", 0) != 0) continue;
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

ParsedConfig parseConfig(const Environment& env) {
  ParsedConfig parsed;
  parsed.values.reserve(kVars.size());
  for (const ConfigVar& var : kVars) {
    const auto it =
        std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == var.name; });
    const std::string value = it == env.end() ? std::string(var.defaultValue) : it->second;
    if (!var.parse(value, parsed.config)) {
      parsed.errors.push_back("invalid value '" + value + "' for " + std::string(var.name) +
                              "; accepted: " + std::string(var.accepted));
      var.parse(var.defaultValue, parsed.config);
    }
    parsed.values.push_back(value);
  }
  for (const auto& [name, value] : env) {
    if (name.rfind("OVERPASS_", 0) != 0) continue;
    if (std::any_of(kVars.begin(), kVars.end(), [&](const ConfigVar& v) { return v.name == name; }))
      continue;
    const ConfigVar* nearest = &kVars[0];
    for (const ConfigVar& var : kVars)
      if (editDistance(name, var.name) < editDistance(name, nearest->name)) nearest = &var;
    parsed.warnings.push_back("unknown variable " + name + " (did you mean " +
                              std::string(nearest->name) + "?)");
  }
  return parsed;
}

std::vector<std::uint64_t> agreementHashes(const ParsedConfig& parsed) {
  std::vector<std::uint64_t> hashes(kVars.size(), 0);
  for (std::size_t i = 0; i < kVars.size(); ++i) {
    if (!kVars[i].agreed) continue;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : parsed.values[i]) h = (h ^ c) * 1099511628211ull;
    hashes[i] = h;
  }
  return hashes;
}

}  // namespace overpass
