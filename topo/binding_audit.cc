#include "topo/binding_audit.h"

#include "common/log.h"

namespace overpass {
namespace {

std::string rankList(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i)
    out += (i ? "," : "") + std::to_string(ranks[i]);
  if (ranks.size() > 8) out += ",... (" + std::to_string(ranks.size()) + ")";
  return out;
}

}  // namespace

std::vector<std::string> bindingAudit(const JobTopology& job) {
  const Topology world = job.world();
  std::vector<int> unbound, acrossNuma, farFromGpu, farFromNic;
  for (int n = 0; n < world.nodeCount(); ++n) {
    bool nodeHasGpu = false, nodeHasNic = false;
    for (int r : world.nodeRanks(n)) {
      nodeHasGpu = nodeHasGpu || !job.ranks[r].gpus.empty();
      nodeHasNic = nodeHasNic || !job.ranks[r].nics.empty();
    }
    for (int r : world.nodeRanks(n)) {
      const Locality& l = job.ranks[r];
      if (!l.bound) {
        unbound.push_back(r);
        continue;
      }
      if (l.numa < 0) acrossNuma.push_back(r);
      if (nodeHasGpu && l.gpus.empty()) farFromGpu.push_back(r);
      if (nodeHasNic && l.nics.empty()) farFromNic.push_back(r);
    }
  }
  std::vector<std::string> lines;
  lines.push_back("topology: " + world.summary() + "; " +
                  std::to_string(world.size() - static_cast<int>(unbound.size())) + " of " +
                  std::to_string(world.size()) + " ranks bound to cpus");
  if (!unbound.empty())
    lines.push_back("ranks " + rankList(unbound) +
                    " are not bound to cpus: the scheduler may move them (mpirun --bind-to core)");
  if (!acrossNuma.empty())
    lines.push_back("ranks " + rankList(acrossNuma) + " are bound across NUMA domains");
  if (!farFromGpu.empty())
    lines.push_back("ranks " + rankList(farFromGpu) +
                    " are bound away from every GPU of their node");
  if (!farFromNic.empty())
    lines.push_back("ranks " + rankList(farFromNic) +
                    " are bound away from every NIC of their node");
  return lines;
}

void auditBinding(const JobTopology& job) {
  if (!logEnabled(LogLevel::kInfo)) return;
  const std::vector<std::string> lines = bindingAudit(job);
  OVERPASS_INFO("%s", lines[0].c_str());
  for (std::size_t i = 1; i < lines.size(); ++i) OVERPASS_WARN("%s", lines[i].c_str());
}

}  // namespace overpass
