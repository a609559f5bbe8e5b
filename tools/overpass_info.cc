// overpass-info: every OVERPASS_* variable with its default, current value and help; the
// algorithm registry; the fallback reasons; the backends this build contains. Needs no MPI.
// `overpass-info --markdown` prints the variables as the table README.md carries (a test keeps
// the two equal); `overpass-info --topology` probes this process with hwloc and prints what it
// found, in the JSON form of OVERPASS_TOPO_DUMP (one rank).
#include <cstdio>
#include <string>

#include "coll/registry.h"
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
  if (argc > 1) {
    std::fprintf(stderr, "usage: overpass-info [--markdown | --topology]\n");
    return 2;
  }
  const ParsedConfig parsed = parseConfig(processEnvironment());
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

  std::printf("\n# Algorithms (collective, name: description)\n");
  for (const Algorithm& a : algorithms())
    std::printf("%-21s %-19s %s\n", std::string(collectiveName(a.coll)).c_str(), a.name.data(),
                a.description.data());

  std::printf("\n# Fallback reasons (calls handed to the MPI library)\n");
  for (std::size_t r = 0; r < kNumFallbackReasons; ++r)
    std::printf("%-22s %s\n", kFallbackReasonNames[r].data(), kFallbackReasonHelp[r].data());

  std::printf("\n# Memory backends: %s\n", gpuBackends().c_str());
  return parsed.errors.empty() ? 0 : 1;
}
