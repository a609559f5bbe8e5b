#include "common/config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <optional>

extern char** environ;

namespace overpass {
namespace {

using Canonical = std::optional<std::string>;

bool hasControlCharacters(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
  });
}

// `value` rounded to 12 significant digits, as text, and back into `value`: ranks whose values
// print alike then hold the same bits too (2000ns and 2us differ in the last bit otherwise).
std::string roundedText(double* value) {
  char buf[64];  // to_chars and from_chars: independent of the application's locale
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), *value, std::chars_format::general, 12);
  if (ec != std::errc()) return std::to_string(*value);
  std::from_chars(buf, end, *value);
  return std::string(buf, end);
}

// A plain decimal number: digits, optionally followed by '.' and digits.
std::optional<double> parseDecimal(std::string_view t) {
  const std::size_t intDigits = std::min(t.find_first_not_of("0123456789"), t.size());
  if (intDigits == 0 || intDigits > 15) return std::nullopt;
  if (intDigits < t.size()) {
    if (t[intDigits] != '.') return std::nullopt;
    const std::string_view fraction = t.substr(intDigits + 1);
    if (fraction.empty() || fraction.size() > 15 ||
        fraction.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
  }
  double number = 0;  // from_chars: independent of the application's locale
  const auto [end, ec] =
      std::from_chars(t.data(), t.data() + t.size(), number, std::chars_format::fixed);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return number;
}

// A number with one of `units` (name, multiplier) right after it; `bare`: the multiplier when
// there is no unit (0: a unit is required).
std::optional<double> parseQuantity(
    std::string_view text, std::initializer_list<std::pair<std::string_view, double>> units,
    double bare) {
  const std::string_view t = text;
  const std::size_t numberEnd = std::min(t.find_first_not_of("0123456789."), t.size());
  const std::string_view unit = t.substr(numberEnd);
  double multiplier = unit.empty() ? bare : 0;
  for (const auto& [name, m] : units)
    if (unit == name) multiplier = m;
  const auto number = parseDecimal(t.substr(0, numberEnd));
  if (!number || multiplier == 0) return std::nullopt;
  return *number * multiplier;
}

// Items of a comma-separated list, blanks around each dropped; nullopt if an item is empty (an
// empty list, a leading, trailing or doubled comma).
std::optional<std::vector<std::string_view>> splitList(std::string_view text) {
  std::vector<std::string_view> items;
  for (;;) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (item.empty()) return std::nullopt;
    items.push_back(item);
    if (comma == std::string_view::npos) return items;
    text.remove_prefix(comma + 1);
  }
}

// One of a few names (any case).
std::optional<std::string> parseChoice(std::string_view text,
                                       std::initializer_list<std::string_view> names) {
  const std::string v = lower(trim(text));
  for (std::string_view n : names)
    if (v == n) return v;
  return std::nullopt;
}

// A file path: any text without control characters, blanks around it dropped; empty: none.
Canonical parsePath(std::string_view text) {
  const std::string_view v = trim(text);
  if (hasControlCharacters(v)) return std::nullopt;
  return std::string(v);
}

Canonical boolText(bool b) {
  return std::string(b ? "1" : "0");
}

Canonical parseDisable(std::string_view value, Config& config) {
  const auto b = parseBoolean(trim(value));
  if (!b) return std::nullopt;
  config.disable = *b;
  return boolText(*b);
}

// all, none, a list of names, or ^ and a list of names (excluded). Canonical: all, none, or the
// shorter of the list of handled collectives and ^ with the list of excluded ones.
Canonical parseColls(std::string_view value, Config& config) {
  const std::string v = lower(trim(value));
  std::bitset<kNumCollectives> handled;
  if (v == "all") {
    handled.set();
  } else if (v != "none") {
    const bool exclude = !v.empty() && v.front() == '^';
    const auto items = splitList(std::string_view(v).substr(exclude ? 1 : 0));
    if (!items) return std::nullopt;
    std::bitset<kNumCollectives> listed;
    for (std::string_view item : *items) {
      const auto c = collectiveFromName(item);
      if (!c || listed.test(index(*c))) return std::nullopt;  // unknown, all/none mixed in, twice
      listed.set(index(*c));
    }
    handled = exclude ? ~listed : listed;
  }
  config.colls = handled;
  if (handled.all()) return std::string("all");
  if (handled.none()) return std::string("none");
  const bool asExclusion = handled.count() > kNumCollectives / 2;
  std::string text = asExclusion ? "^" : "";
  for (std::size_t i = 0; i < kNumCollectives; ++i)
    if (handled.test(i) != asExclusion)
      text += (text.size() > (asExclusion ? 1u : 0u) ? "," : "") + std::string(kCollectiveNames[i]);
  return text;
}

Canonical parseLog(std::string_view value, Config& config) {
  const auto name = parseChoice(value, {"error", "warn", "info", "debug", "trace"});
  if (!name) return std::nullopt;
  config.logLevel = *logLevelFromName(*name);
  return name;
}

template <std::string Config::*kMember>
Canonical parsePathInto(std::string_view value, Config& config) {
  auto path = parsePath(value);
  if (path) config.*kMember = *path;
  return path;
}

// Digits, with at most a sign and a '.': a number, which no one means as a file name.
bool looksLikeNumber(std::string_view v) {
  if (!v.empty() && (v.front() == '-' || v.front() == '+')) v.remove_prefix(1);
  return !v.empty() && v.find_first_not_of("0123456789.") == std::string_view::npos;
}

// A boolean, or a path: to be told apart from a misspelt boolean or a number, a path must contain
// '/' or '.' ("stats.json", "./stats", "/dev/stdout").
Canonical parseStats(std::string_view value, Config& config) {
  const std::string_view v = trim(value);
  if (const auto b = parseBoolean(v)) {
    config.statsMode = *b ? StatsMode::kTable : StatsMode::kOff;
    config.statsPath.clear();
    return boolText(*b);
  }
  if (looksLikeNumber(v) || v.find_first_of("/.") == std::string_view::npos ||
      hasControlCharacters(v))
    return std::nullopt;
  config.statsMode = StatsMode::kJson;
  config.statsPath = std::string(v);
  return config.statsPath;
}

constexpr std::uint64_t kMaxRanksPerNode = 1 << 20;

Canonical parseRanksPerNode(std::string_view value, Config& config) {
  const auto n = parseCount(trim(value), kMaxRanksPerNode);
  if (!n) return std::nullopt;
  config.topoRanksPerNode = static_cast<int>(*n);
  return std::to_string(*n);
}

Canonical parseTransport(std::string_view value, Config& config) {
  const auto name = parseChoice(value, {"auto", "pmpi", "ucx"});
  if (!name) return std::nullopt;
  config.transport = *name == "ucx"    ? TransportKind::kUcx
                     : *name == "pmpi" ? TransportKind::kPmpi
                                       : TransportKind::kAuto;
  return name;
}

constexpr double kMinTimeout = 0.001, kMaxTimeout = 86400;

Canonical parseTimeout(std::string_view value, Config& config) {
  const auto seconds = parseDuration(trim(value), /*unitRequired=*/false);
  if (!seconds || (*seconds != 0 && (*seconds < kMinTimeout || *seconds > kMaxTimeout)))
    return std::nullopt;
  double rounded = *seconds;
  std::string text = roundedText(&rounded);
  config.timeoutSeconds = rounded;
  return text;
}

constexpr std::uint64_t kMaxRndvThresh = std::uint64_t{4} << 30;

// Canonical: "", "auto", or the number of bytes (what Overpass's UCX context is given).
Canonical parseRndvThresh(std::string_view value, Config& config) {
  const std::string v = lower(trim(value));
  if (v.empty() || v == "auto") {
    config.ucxRndvThresh = v;
    return v;
  }
  const auto bytes = parseSize(v, kMaxRndvThresh);
  if (!bytes) return std::nullopt;
  config.ucxRndvThresh = std::to_string(*bytes);
  return config.ucxRndvThresh;
}

constexpr std::uint64_t kMinBuffer = 4096, kMaxBuffer = std::uint64_t{64} << 20;

// A size of 0 (off) or 4K-64M into a Config member.
template <std::size_t Config::*kMember>
Canonical parseBufferSize(std::string_view value, Config& config) {
  const auto bytes = parseSize(trim(value), kMaxBuffer);
  if (!bytes || (*bytes != 0 && *bytes < kMinBuffer)) return std::nullopt;
  config.*kMember = static_cast<std::size_t>(*bytes);
  return formatSize(*bytes);
}

Canonical parseProgress(std::string_view value, Config& config) {
  const auto name = parseChoice(value, {"calls", "thread"});
  if (!name) return std::nullopt;
  config.progress = *name == "thread" ? ProgressMode::kThread : ProgressMode::kCalls;
  return name;
}

Canonical parseCoreDistance(std::string_view value, Config& config) {
  const auto name = parseChoice(value, {"auto", "near", "far"});
  if (!name) return std::nullopt;
  config.coresFar = *name == "auto" ? std::nullopt : std::optional<bool>(*name == "far");
  return name;
}

Canonical parseRaceVote(std::string_view value, Config& config) {
  const auto name = parseChoice(value, {"auto", "first", "second"});
  if (!name) return std::nullopt;
  config.raceVote = *name == "auto" ? std::nullopt : std::optional<int>(*name == "second");
  return name;
}

Canonical parseCommWarmUp(std::string_view value, Config& config) {
  const auto calls = parseCount(trim(value), 999999);
  if (!calls) return std::nullopt;
  config.commWarmUp = static_cast<unsigned>(*calls);
  return std::to_string(*calls);
}

Canonical parseGpuDepth(std::string_view value, Config& config) {
  const auto depth = parseCount(trim(value), 8);
  if (!depth || *depth < 2) return std::nullopt;
  config.gpuDepth = static_cast<int>(*depth);
  return std::to_string(*depth);
}

// A boolean variable.
template <bool Config::*kFlag>
Canonical parseFlag(std::string_view value, Config& config) {
  const auto b = parseBoolean(trim(value));
  if (!b) return std::nullopt;
  config.*kFlag = *b;
  return boolText(*b);
}

// OVERPASS_TUNE: its grammar belongs to the selector (coll/select/tune.h), which checks it when it
// is built; here only blanks around it are dropped.
Canonical parseTune(std::string_view value, Config& config) {
  const std::string_view v = trim(value);
  if (hasControlCharacters(v)) return std::nullopt;
  config.tune = std::string(v);
  return config.tune;
}

// OVERPASS_<COLLECTIVE>=name: one algorithm for every call of the collective (the name is checked
// against the registry when the selector is built). Empty: no override.
template <Collective kColl>
Canonical parseForced(std::string_view value, Config& config) {
  const std::string v = lower(trim(value));
  if (v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    return std::nullopt;
  config.forced[index(kColl)] = v;
  return v;
}

constexpr std::string_view kCostModelDefault = "latency=2us,bandwidth=6GB/s,reduce=8GB/s";
constexpr double kMaxLatency = 1, kMaxRate = 1e15;

// Keys the value does not name keep their defaults. Canonical: every key, in seconds and bytes
// per second.
Canonical parseCostModel(std::string_view value, Config& config) {
  double latency = 2e-6, bandwidth = 6e9, reduce = 8e9;  // kCostModelDefault
  const std::initializer_list<std::pair<std::string_view, double>> rate = {{"GB/s", 1e9},
                                                                           {"MB/s", 1e6}};
  const auto items = splitList(value);
  if (!items) return std::nullopt;
  std::vector<std::string_view> seen;
  for (std::string_view item : *items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = trim(item.substr(0, eq));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return std::nullopt;  // twice
    seen.push_back(key);
    const std::string_view number = trim(item.substr(eq + 1));
    std::optional<double> parsed;
    double* target = nullptr;
    double hi = kMaxRate;
    if (key == "latency") {
      parsed = parseDuration(number, /*unitRequired=*/true);
      target = &latency;
      hi = kMaxLatency;
    } else if (key == "bandwidth" || key == "reduce") {
      parsed = parseQuantity(number, rate, 0);
      target = key == "bandwidth" ? &bandwidth : &reduce;
    }
    if (!parsed || !(*parsed > 0) || *parsed > hi) return std::nullopt;
    *target = *parsed;
  }
  std::string text = "latency=" + roundedText(&latency) + "s,bandwidth=" + roundedText(&bandwidth) +
                     "B/s,reduce=" + roundedText(&reduce) + "B/s";
  config.costLatency = latency;
  config.costBandwidth = bandwidth;
  config.costReduceBandwidth = reduce;
  return text;
}

// OVERPASS_<COLLECTIVE>, one per line of OVERPASS_COLLECTIVES (common/collective.h).
#define OVERPASS_FORCED_VAR(id, name, NAME)                                            \
  ConfigVar{"OVERPASS_" NAME,                                                          \
            "",                                                                        \
            "an algorithm of " name " (overpass-info lists them), or empty",           \
            "Use this algorithm for every " name " call it can serve: the rule '" name \
            ":@ALGORITHM', above every OVERPASS_TUNE rule.",                           \
            true,                                                                      \
            parseForced<Collective::id>},

constexpr std::string_view kCollsAcceptedHead = "all or none alone, or a comma-separated list of ";
constexpr std::string_view kCollsAcceptedTail =
    " (each once); a leading ^ excludes the listed ones";
// The collectives' names from their one list.
constexpr std::string_view kCollsAccepted =
    JoinedText<kCollsAcceptedHead, kCollectiveList, kCollsAcceptedTail>::value;

constexpr std::array kVars = {
    ConfigVar{"OVERPASS_DISABLE", "0", kBooleanAccepted,
              "Pass every call straight to the MPI library underneath (for A/B comparisons).", true,
              parseDisable},
    ConfigVar{"OVERPASS_COLLS", "all", kCollsAccepted,
              "Collectives Overpass handles; the others go to the MPI library untouched.", true,
              parseColls},
    ConfigVar{"OVERPASS_LOG", "warn", "error|warn|info|debug|trace",
              "Log level: info shows what was detected and chosen once per communicator, debug "
              "every fallback and its reason, trace every call.",
              false, parseLog},
    ConfigVar{"OVERPASS_LOG_FILE", "", "a file path; %r is replaced by the world rank",
              "Write log lines to this file instead of stderr.", false,
              parsePathInto<&Config::logFile>},
    ConfigVar{"OVERPASS_STATS", "0",
              "0|1 (or no|yes, false|true, off|on), or a file path containing / or . (e.g. "
              "stats.json, ./stats)",
              "1: print a per-collective table (calls, bytes, time, algorithms, fallbacks) to "
              "stderr on rank 0 at MPI_Finalize; a path: write the same as JSON to that file "
              "(opened by rank 0 at MPI_Init, where a file that cannot be written stops the job; "
              "if the write at MPI_Finalize fails, rank 0 says so and exits with status 1).",
              true, parseStats},
    ConfigVar{"OVERPASS_TOPO_DUMP", "", "a file path",
              "Write the job's topology as JSON (docs/TOPOLOGY.md) to this file, once, from rank 0 "
              "at MPI_Init; a file that cannot be written stops the job.",
              false, parsePathInto<&Config::topoDump>},
    ConfigVar{"OVERPASS_TOPO_FILE", "", "the path of a regular file of at most 64 MiB",
              "Load the job's topology from this JSON file (as OVERPASS_TOPO_DUMP writes it) "
              "instead of probing the machine: for tests and for reproducing a user's machine.",
              true, parsePathInto<&Config::topoFile>},
    ConfigVar{"OVERPASS_TOPO_RANKS_PER_NODE", "0", "0 (off) or a number of ranks up to 1048576",
              "Emulate nodes: split each machine's ranks into virtual nodes of this many "
              "consecutive ranks, so hierarchical paths run on one machine.",
              true, parseRanksPerNode},
    ConfigVar{"OVERPASS_TRANSPORT", "auto", "auto|pmpi|ucx",
              "How Overpass's algorithms move bytes: over the MPI library's point-to-point calls "
              "on a private communicator (pmpi), over Overpass's own UCX context (ucx), or (auto) "
              "pmpi on one host and, on communicators across hosts, UCX for messages below 64 KiB "
              "between hosts and pmpi for the rest. If UCX cannot start on some rank, every rank "
              "uses pmpi. docs/PERFORMANCE.md, \"Transport decision\", has the figures.",
              true, parseTransport},
    ConfigVar{"OVERPASS_TIMEOUT", "0",
              "0 (off), or 0.001 to 86400 seconds: a plain decimal number (30, 2.5) with an "
              "optional unit ns|us|ms|s (500ms)",
              "Watch every intercepted call (whichever path serves it) and Overpass's own "
              "start-up and teardown: one that makes no progress for this long is reported (the "
              "collective, the communicator, the ranks behind it) and the job aborted (README).",
              true, parseTimeout},
    ConfigVar{"OVERPASS_UCX_RNDV_THRESH", "",
              "auto, a size from 0 to 4G (digits with an optional K, M or G suffix: x1024), or "
              "empty for UCX's default",
              "Message size from which Overpass's UCX context switches to zero-copy rendezvous; "
              "the application's own UCX settings are not changed.",
              false, parseRndvThresh},
    ConfigVar{"OVERPASS_SHM_BUFFER", "128K",
              "0 (off) or a size from 4K to 64M (digits with an optional K, M or G suffix: x1024)",
              "Bytes per rank and round of the node shared-memory engine (each rank maps two "
              "such buffers per rank of its node); 0 turns the engine "
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
              true, parseTune},
    OVERPASS_COLLECTIVES(OVERPASS_FORCED_VAR)  // OVERPASS_ALLREDUCE & co.
    ConfigVar{"OVERPASS_DETERMINISTIC", "0", kBooleanAccepted,
              "Floating-point and user-defined reductions combine the ranks' contributions in "
              "rank order, element by element, whatever the algorithm: repeated runs give the "
              "same bits (docs/TUNING.md says what is guaranteed).",
              true, parseFlag<&Config::deterministic>},
    ConfigVar{"OVERPASS_CORE_DISTANCE", "auto", "auto|near|far",
              "How far this rank's core is from its peer's on communicators of two ranks on one "
              "node, which tune rules with cores= go by (docs/TUNING.md): measured every 1024 "
              "blocking calls by both ranks together (auto), or taken as given; the ranks agree "
              "on far where either says far, so their values may differ.",
              false, parseCoreDistance},
    ConfigVar{"OVERPASS_RACE_VOTE", "auto", "auto|first|second",
              "This rank's vote in the races of tune rules that name two algorithms "
              "(docs/TUNING.md): its own timings of both on the program's calls (auto), or the "
              "first or second algorithm as given. The ranks agree on the faster of the slowest "
              "rank's times (a tie, also between a first and a second vote, keeps the first), so "
              "their values may differ.",
              false, parseRaceVote},
    ConfigVar{"OVERPASS_PROGRESS", "calls", "calls|thread",
              "Who advances the nonblocking collectives Overpass serves: every MPI call of the "
              "application that waits or tests (calls), or also a thread of Overpass's that polls "
              "with growing pauses while operations are outstanding and sleeps otherwise "
              "(thread: the MPI library is then initialised at MPI_THREAD_MULTIPLE; README, "
              "\"Nonblocking collectives\").",
              false, parseProgress},
    ConfigVar{"OVERPASS_FUSION", "0",
              "0 (off) or a size from 4K to 64M (digits with an optional K, M or G suffix: x1024)",
              "Consecutive nonblocking allreduces on one communicator with the same datatype and "
              "operation run as one allreduce of up to this many bytes, in groups the ranks agree "
              "on (one small allreduce per group); every operation still starts at once.",
              true, parseBufferSize<&Config::fusion>},
    ConfigVar{"OVERPASS_GPU_CHUNK", "1M",
              "0 (off) or a size from 4K to 64M (digits with an optional K, M or G suffix: x1024)",
              "Allreduce and reduce of at least two chunks on a communicator where device "
              "buffers can occur run chunk by chunk, copies of neighbouring chunks overlapping "
              "the work on host memory (docs/GPU.md); 0: whole buffers staged at once.",
              true, parseBufferSize<&Config::gpuChunk>},
    ConfigVar{"OVERPASS_GPU_DEPTH", "3", "2 to 8",
              "Chunks of that pipeline in host memory per direction: 3 lets the copy up of the "
              "next chunk, the work on this one and the copy down of the previous one run at "
              "once.",
              false, parseGpuDepth},
    ConfigVar{"OVERPASS_GPU_IPC", "1", kBooleanAccepted,
              "Allreduce, bcast and alltoall among the ranks of one node whose buffers are all "
              "on a device exchange them through CUDA IPC and reduce on the device, where the "
              "ranks agree that they can (docs/GPU.md); 0: always through host memory.",
              true, parseFlag<&Config::gpuIpc>},
    ConfigVar{"OVERPASS_SIM_DEVICE", "0", kBooleanAccepted,
              "Tests only: treat the simulated device window of gpu/sim_device.h as GPU memory "
              "(staged like cudaMalloc'd buffers), so the device path runs without a GPU "
              "(docs/GPU.md).",
              false, parseFlag<&Config::simulatedDevice>},
    ConfigVar{"OVERPASS_COST_MODEL", kCostModelDefault,
              "comma-separated, each key once: latency=TIME (a decimal number with ns|us|ms|s, at "
              "most 1s), bandwidth=RATE, reduce=RATE (a decimal number with GB/s|MB/s, at most "
              "1000000GB/s), each above 0; unnamed keys keep their defaults",
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

std::optional<bool> parseBoolean(std::string_view text) {
  const std::string v = lower(text);
  if (v == "1" || v == "yes" || v == "true" || v == "on") return true;
  if (v == "0" || v == "no" || v == "false" || v == "off") return false;
  return std::nullopt;
}

std::optional<std::uint64_t> parseCount(std::string_view t, std::uint64_t hi) {
  if (t.empty() || t.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (ec != std::errc() || end != t.data() + t.size() || n > hi) return std::nullopt;
  return n;
}

std::optional<double> parseDuration(std::string_view text, bool unitRequired) {
  return parseQuantity(text, {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}},
                       unitRequired ? 0 : 1);
}

ParsedConfig parseConfig(const Environment& env) {
  ParsedConfig parsed;
  parsed.values.reserve(kVars.size());
  parsed.canonical.reserve(kVars.size());
  for (const ConfigVar& var : kVars) {
    const auto it =
        std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == var.name; });
    // Empty means the default, as if unset (`-x OVERPASS_X=$UNSET_SHELL_VARIABLE`).
    const std::string value =
        it == env.end() || it->second.empty() ? std::string(var.defaultValue) : it->second;
    const bool blank = !value.empty() && trim(value).empty();
    std::optional<std::string> canonical = blank ? std::nullopt : var.parse(value, parsed.config);
    if (!canonical) {
      // The variable first: a long value is shortened, never the name.
      parsed.errors.push_back(
          std::string(var.name) + ": invalid value '" + shortened(value) + "'" +
          (blank ? " (only blanks; leave it empty or unset for the default)" : "") +
          "; accepted: " + std::string(var.accepted));
      canonical = var.parse(var.defaultValue, parsed.config);
    }
    parsed.values.push_back(value);
    parsed.canonical.push_back(canonical.value_or(std::string()));
  }
  for (const auto& [name, value] : env) {
    if (name.rfind("OVERPASS_", 0) != 0) continue;
    if (std::any_of(kVars.begin(), kVars.end(), [&](const ConfigVar& v) { return v.name == name; }))
      continue;
    const ConfigVar* nearest = &kVars[0];
    for (const ConfigVar& var : kVars)
      if (editDistance(name, var.name) < editDistance(name, nearest->name)) nearest = &var;
    parsed.warnings.push_back("unknown variable " + shortened(name) + " (did you mean " +
                              std::string(nearest->name) + "?)");
  }
  return parsed;
}

std::vector<std::uint64_t> agreementHashes(const ParsedConfig& parsed) {
  std::vector<std::uint64_t> hashes(kVars.size(), 0);
  for (std::size_t i = 0; i < kVars.size(); ++i) {
    if (!kVars[i].agreed) continue;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : parsed.canonical[i]) h = (h ^ c) * 1099511628211ull;
    hashes[i] = h;
  }
  return hashes;
}

namespace {

// Bytes per rank of the record that carries a differing variable's value: the value shortened to
// its first kShownCharacters (control characters escaped), which always fits.
constexpr std::size_t kShownCharacters = 200;
constexpr std::size_t kShownRecord = 4 * kShownCharacters + 64;

}  // namespace

Status compareConfigurations(const ParsedConfig& parsed, Bootstrap& bootstrap,
                             ConfigComparison* out) {
  *out = ConfigComparison{};
  // Every rank contributes {has errors, has warnings, hash of each variable}.
  const std::vector<std::uint64_t> hashes = agreementHashes(parsed);
  const std::size_t width = 2 + hashes.size();
  const int ranks = bootstrap.size();
  std::vector<std::uint64_t> mine(width), all(width * ranks);
  mine[0] = !parsed.errors.empty();
  mine[1] = !parsed.warnings.empty();
  std::copy(hashes.begin(), hashes.end(), mine.begin() + 2);
  OVERPASS_CHECK(bootstrap.allgather(mine.data(), all.data(), width * sizeof(std::uint64_t)));
  for (int r = ranks - 1; r >= 0; --r) {
    if (all[r * width]) out->firstRankWithErrors = r;
    if (all[r * width + 1]) out->firstRankWithWarnings = r;
  }
  if (out->firstRankWithErrors >= 0)
    return Status::kOk;  // values of a malformed config mean little
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    int other = -1;
    for (int r = 1; r < ranks && other < 0; ++r)
      if (all[r * width + 2 + i] != all[2 + i]) other = r;
    if (other < 0) continue;
    // Every rank saw the same hashes, so every rank takes part in this exchange of the values.
    std::vector<char> record(kShownRecord, '\0'), values(kShownRecord * ranks);
    const std::string shown = shortened(parsed.canonical[i], kShownCharacters);
    std::memcpy(record.data(), shown.data(), std::min(shown.size(), kShownRecord - 1));
    OVERPASS_CHECK(bootstrap.allgather(record.data(), values.data(), kShownRecord));
    auto valueOf = [&](int r) { return std::string(values.data() + r * kShownRecord); };
    out->mismatches.push_back(std::string(kVars[i].name) + " differs between ranks: rank 0 has '" +
                              valueOf(0) + "', rank " + std::to_string(other) + " has '" +
                              valueOf(other) +
                              "'; every rank must see the same value, or ranks would take "
                              "different paths");
  }
  return Status::kOk;
}

}  // namespace overpass
