// overpass-info: every OVERPASS_* variable with its default, current value and help; the
// algorithm registry; the fallback reasons; the backends this build contains. Needs no MPI.
// `overpass-info --markdown` prints the variables as the table README.md carries (a test keeps
// the two equal); `overpass-info --topology` probes this process with hwloc and prints what it
// found, in the JSON form of OVERPASS_TOPO_DUMP (one rank); `overpass-info --selection NP` prints
// the effective selection table for a team of NP ranks under this environment's rules, on one
// node (the default: the shared-memory engine available) or spread over 2 nodes.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include "coll/registry.h"
#include "coll/selector.h"
#include "common/config.h"
#include "common/fallback.h"
#include "gpu/backend_info.h"
#include "topo/binding_audit.h"
#include "topo/job_topology.h"

using namespace overpass;

namespace {

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
      "# Selection for %d ranks %s%s (size = one rank's contribution in bytes; "
      "reductions of 4-byte floating-point elements)\n",
      ranks, shmBuffer ? "on one node" : "spread over nodes (2 of NP/2 ranks for even NP >= 4)",
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
      if (!shmBuffer && ranks >= 4 && ranks % 2 == 0) {  // spread: 2 nodes of NP/2 ranks
        shape.nodes = 2;
        shape.perNode = ranks / 2;
      }
      shape.ordered = deterministic && isReduction(coll);
      const Selection s = selector.select(shape);
      return std::string(s.algorithm->name) + "\t" +
             (s.rule ? "rule '" + s.rule->text + "'" : std::string("cost model"));
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
  if (argc > 1 && std::string(argv[1]) == "--markdown") {
    printMarkdown();
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--topology") {
    JobTopology job;
    job.ranks = {probeLocality()};
    job.node = {0};
    std::printf("%s", topologyToJson(job).c_str());
    for (const std::string& line : bindingAudit(job)) std::printf("# %s\n", line.c_str());
    return 0;
  }
  ParsedConfig parsed = parseConfig(processEnvironment());
  const std::optional<Selector> selector = Selector::create(parsed.config, &parsed.errors);
  if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--selection") {
    const int ranks = std::atoi(argv[2]);
    const bool spread = argc == 4 && std::string(argv[3]) == "spread";
    for (const std::string& e : parsed.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
    if (!selector || ranks < 1 || (argc == 4 && !spread && std::string(argv[3]) != "one-node"))
      return 1;
    printSelection(*selector, ranks, parsed.config.deterministic,
                   spread || ranks < 2 ? 0 : parsed.config.shmBuffer);
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr,
                 "usage: overpass-info [--markdown | --topology | --selection NP "
                 "[one-node|spread]]\n");
    return 2;
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
      "deterministic mode needs; [device]: taken where every buffer is on a device, never "
      "selected)\n");
  for (const Algorithm& a : algorithms())
    std::printf("%-21s %-22s %s%s%s\n", std::string(collectiveName(a.coll)).c_str(), a.name.data(),
                a.rankOrder ? "* " : "", a.device ? "[device] " : "", a.description.data());
  std::printf("\n# Built-in tune rules (overpass-info --selection NP shows the effect)\n%s\n",
              kDefaultTune.empty() ? "(none)" : std::string(kDefaultTune).c_str());

  std::printf("\n# Fallback reasons (calls handed to the MPI library)\n");
  for (std::size_t r = 0; r < kNumFallbackReasons; ++r)
    std::printf("%-22s %s\n", kFallbackReasonNames[r].data(), kFallbackReasonHelp[r].data());

  std::printf("\n# Memory backends: %s\n", gpuBackends().c_str());
  return parsed.errors.empty() ? 0 : 1;
}
