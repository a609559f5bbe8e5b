// The binding audit: at OVERPASS_LOG=info, one summary of the job's layout (nodes, ranks per
// node, binding), and warnings for ranks that are unbound, bound across NUMA domains, or bound
// away from every GPU or NIC of their node. Called on rank 0 only.
#pragma once

#include <string>
#include <vector>

#include "topo/job_topology.h"

namespace overpass {

// The lines the audit logs: the summary first, then the warnings.
std::vector<std::string> bindingAudit(const JobTopology& job);
void auditBinding(const JobTopology& job);

}  // namespace overpass
