// overpass-info: every OVERPASS_* variable with its default, current value and help; the
// algorithm registry; the fallback reasons; the backends this build contains. Needs no MPI.
// `overpass-info --markdown` prints the variables as the table README.md carries (a test keeps
// the two equal); `overpass-info --topology` probes this process with hwloc and prints what it
// found, in the JSON form of OVERPASS_TOPO_DUMP (one rank); `overpass-info --selection NP` prints
// the effective selection table for a team of NP ranks under this environment's rules, on one
// node (the default: the shared-memory engine available) or spread over 2 nodes;
// `overpass-info --algorithms` lists the registry one "COLLECTIVE NAME" line per algorithm, for
// scripts (scripts/compare checks its @ALGORITHM configurations with it). `--help` describes
// every option; a bad command line gets a message naming the argument and exit status 2.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/config.h"
#include "common/fallback.h"
#include "gpu/backend_info.h"
#include "topo/binding_audit.h"
#include "topo/job_topology.h"

using namespace overpass;

namespace {

// The largest team --selection describes: far above any node, and the cost formulas stay exact.
constexpr int kMaxSelectionRanks = 65536;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage: overpass-info [--markdown | --topology | --algorithms | --selection NP "
    "[one-node|spread] | --help]\n";

void printHelp() {
  std::printf(
      "overpass-info: Overpass's variables, algorithms and selection, without MPI.\n\n%s\n"
      "  (no option)     every OVERPASS_* variable with what it accepts, its default and its\n"
      "                  value in this environment; the algorithms; the built-in tune rules; the\n"
      "                  fallback reasons; the memory backends of this build\n"
      "  --markdown      the variables as the Markdown table README.md carries\n"
      "  --topology      probe this process with hwloc and print what it found as JSON (the form\n"
      "                  of OVERPASS_TOPO_DUMP), then the binding audit\n"
      "  --algorithms    the algorithm registry, one line 'COLLECTIVE NAME' per algorithm (for\n"
      "                  scripts; a name goes after @ in OVERPASS_TUNE)\n"
      "  --selection NP [one-node|spread]\n"
      "                  which algorithm serves which sizes for a team of NP ranks (a whole "
      "number\n"
      "                  from 1 to %d) under this environment's OVERPASS_TUNE and cost model:\n"
      "                  on one node (the default) or spread over 2 nodes (NP/2 ranks each,\n"
      "                  one more on the first for odd NP)\n"
      "  -h, --help      this help\n\n"
      "Exit status: 0 done; 1 an OVERPASS_* variable of this environment is malformed (the\n"
      "errors are printed); 2 a bad command line.\n",
      kUsage, kMaxSelectionRanks);
}

// A bad command line: the message, the usage and where to read more, on stderr.
int usageError(const std::string& message) {
  std::fprintf(stderr, "overpass-info: %s\n%sRun 'overpass-info --help' for every option.\n",
               message.c_str(), kUsage);
  return kExitUsage;
}

// NP of --selection: the whole text a number from 1 to kMaxSelectionRanks.
std::optional<int> parseRanks(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p != end || value < 1 || value > kMaxSelectionRanks) return std::nullopt;
  return value;
}

// A table cell: '|' would end the cell.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void printMarkdown() {
  std::printf("| Variable | Default | Accepted | Meaning |\n|---|---|---|---|\n");
  for (const ConfigVar& v : configVars())
    std::printf("| `%s` | %s | %s | %s%s |\n", v.name.data(),
                v.defaultValue.empty() ? "(empty)" : ("`" + cell(v.defaultValue) + "`").c_str(),
                cell(v.accepted).c_str(), cell(v.help).c_str(),
                v.agreed ? " Must be equal on every rank." : "");
}

// Which algorithm serves each size range, evaluated at 0, every power of two and every rule
// bound (the cost model can only change its choice between those points in rare cases).
void printSelection(const Selector& selector, int ranks, bool deterministic,
                    std::size_t shmBuffer) {
  std::printf(
      "# Selection for %d rank%s%s (size = one rank's contribution in bytes; "
      "reductions of 4-byte floating-point elements)\n",
      ranks,
      ranks < 2   ? ""
      : shmBuffer ? "s on one node"
                  : "s spread over 2 nodes (NP/2 ranks each, one more on the first for odd NP)",
      deterministic ? ", deterministic mode" : "");
  std::printf("# %-20s %-12s %-22s %s\n", "collective", "sizes", "algorithm", "decided by");
  for (std::size_t c = 0; c < kNumCollectives; ++c) {
    const auto coll = static_cast<Collective>(c);
    std::set<std::size_t> points = {0};
    for (int k = 0; k <= 40; ++k) points.insert(std::size_t{1} << k);
    for (const TuneRule& r : selector.rules())
      if (r.coll == coll) points.insert({r.minBytes, r.maxBytes});
    points.erase(std::numeric_limits<std::size_t>::max());
    std::vector<std::size_t> sorted(points.begin(), points.end());
    auto describe = [&](std::size_t bytes) {
      CallShape shape;
      shape.coll = coll;
      shape.bytes = bytes;
      shape.count = isReduction(coll) ? bytes / 4 : bytes;
      shape.teamSize = ranks;
      shape.shmBuffer = shmBuffer;
      if (!shmBuffer && ranks >= 2) {  // spread: 2 nodes of NP/2 ranks, rounded up and down
        shape.nodes = 2;
        shape.maxPerNode = (ranks + 1) / 2;
      }
      shape.ordered = deterministic && isReduction(coll);
      auto decided = [&](CoreDistance cores) {
        shape.cores = cores;
        const Selection s = selector.select(shape);
        std::string name(s.algorithm->name);
        if (s.rival) name += "|" + std::string(s.rival->name);  // a race (coll/select/race.h)
        return std::pair<std::string, std::string>(
            name, s.rule ? "rule '" + s.rule->text + "'" : "cost model");
      };
      // Two ranks on one node read how far apart their cores are (shm/core_distance.h): where
      // that changes the choice, both, the far one after a '|'.
      const bool paired = shmBuffer && ranks == 2;
      auto near = decided(paired ? CoreDistance::kNear : CoreDistance::kUnread);
      if (paired) {
        const auto far = decided(CoreDistance::kFar);
        if (far != near) {
          near.first += " | far: " + far.first;
          near.second += " | far: " + far.second;
        }
      }
      return near.first + "\t" + near.second;
    };
    std::size_t start = 0;
    std::string current = describe(0);
    for (std::size_t i = 1; i <= sorted.size(); ++i) {
      const std::size_t at =
          i < sorted.size() ? sorted[i] : std::numeric_limits<std::size_t>::max();
      const std::string here = i < sorted.size() ? describe(at) : std::string();
      if (here == current) continue;
      const std::size_t tab = current.find('\t');
      std::printf("%-22s %-12s %-22s %s\n", std::string(collectiveName(coll)).c_str(),
                  (formatSize(start) + "-" + formatSize(at)).c_str(),
                  current.substr(0, tab).c_str(), current.substr(tab + 1).c_str());
      start = at;
      current = here;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::string_view a : args) {
    if (a == "-h" || a == "--help") {
      printHelp();
      return 0;
    }
  }
  const std::string_view mode = args.empty() ? std::string_view() : args[0];
  // The options without operands take nothing after them.
  if ((mode == "--markdown" || mode == "--topology" || mode == "--algorithms") && args.size() > 1)
    return usageError("unexpected argument '" + std::string(args[1]) + "' after " +
                      std::string(mode) + " (it takes none)");
  if (mode == "--markdown") {
    printMarkdown();
    return 0;
  }
  if (mode == "--topology") {
    JobTopology job;
    job.ranks = {probeLocality()};
    job.node = {0};
    std::printf("%s", topologyToJson(job).c_str());
    for (const std::string& line : bindingAudit(job)) std::printf("# %s\n", line.c_str());
    return 0;
  }
  if (mode == "--algorithms") {
    for (const Algorithm& a : algorithms())
      std::printf("%s %s\n", std::string(collectiveName(a.coll)).c_str(), a.name.data());
    return 0;
  }
  int ranks = 0;
  bool spread = false;
  if (mode == "--selection") {
    if (args.size() < 2)
      return usageError("--selection needs NP, the number of ranks (a whole number from 1 to " +
                        std::to_string(kMaxSelectionRanks) + ")");
    const std::optional<int> np = parseRanks(args[1]);
    if (!np)
      return usageError("--selection: NP '" + std::string(args[1]) +
                        "' is not a whole number from 1 to " + std::to_string(kMaxSelectionRanks));
    if (args.size() > 2 && args[2] != "one-node" && args[2] != "spread")
      return usageError("--selection: unknown layout '" + std::string(args[2]) +
                        "' (accepted: one-node, spread)");
    if (args.size() > 3)
      return usageError("unexpected argument '" + std::string(args[3]) + "' after --selection " +
                        std::string(args[1]) + " " + std::string(args[2]));
    ranks = *np;
    spread = args.size() > 2 && args[2] == "spread";
  } else if (!args.empty()) {
    return usageError((mode.starts_with("-") ? "unknown option '" : "unexpected argument '") +
                      std::string(mode) + "'");
  }
  ParsedConfig parsed = parseConfig(processEnvironment());
  const std::optional<Selector> selector = Selector::create(parsed.config, &parsed.errors);
  if (ranks > 0) {
    for (const std::string& e : parsed.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
    if (!selector) return 1;
    printSelection(*selector, ranks, parsed.config.deterministic,
                   spread || ranks < 2 ? 0 : parsed.config.shmBuffer);
    return 0;
  }
  std::printf("# Overpass variables (current value from this environment)\n");
  const auto vars = configVars();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const ConfigVar& v = vars[i];
    std::printf("#\n# %s\n#   accepted: %s\n#   default: '%s'%s\n%s=%s\n", v.help.data(),
                v.accepted.data(), v.defaultValue.data(),
                v.agreed ? "; must be equal on every rank" : "", v.name.data(),
                parsed.values[i].c_str());
  }
  for (const std::string& w : parsed.warnings) std::printf("# warning: %s\n", w.c_str());
  for (const std::string& e : parsed.errors) std::printf("# error: %s\n", e.c_str());

  std::printf(
      "\n# Algorithms (collective, name: description; * combines in rank order, as "
      "deterministic mode needs; [device]: on device buffers, by rules with mem=device)\n");
  for (const Algorithm& a : algorithms())
    std::printf(
        "%-21s %-22s %s%s%s\n", std::string(collectiveName(a.coll)).c_str(), a.name.data(),
        a.rankOrder ? "* " : "",
        a.kind == AlgorithmKind::kDevice || a.kind == AlgorithmKind::kPipeline ? "[device] " : "",
        a.description.data());
  std::printf("\n# Built-in tune rules (overpass-info --selection NP shows the effect)\n%s\n",
              kDefaultTune.empty() ? "(none)" : std::string(kDefaultTune).c_str());
  if (selector) {
    std::string generated = generatedTune(parsed.config);
    std::replace(generated.begin(), generated.end(), '#', '\n');  // one rule per line
    std::printf(
        "\n# Generated rules (device buffers, from OVERPASS_GPU_CHUNK and OVERPASS_GPU_IPC; "
        "communicators of one rank), above the built-in ones\n%s\n",
        generated.c_str());
  }

  std::printf("\n# Fallback reasons (calls handed to the MPI library)\n");
  for (std::size_t r = 0; r < kNumFallbackReasons; ++r)
    std::printf("%-22s %s\n", kFallbackReasonNames[r].data(), kFallbackReasonHelp[r].data());

  std::printf("\n# Memory backends: %s\n", gpuBackends().c_str());
  return parsed.errors.empty() ? 0 : 1;
}
