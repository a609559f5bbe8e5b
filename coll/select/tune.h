// The tune grammar: rules that pick an algorithm by collective, call size and team size.
//
//   tune   := rule ('#' rule)*
//   rule   := collective (':' field)*          exactly one '@' field per rule
//   field  := range                            call size in bytes, half-open [lo, hi)
//           | 'np=' range | 'np=' number       team size, half-open [lo, hi), or exactly one
//           | 'level=team' | 'level=nodes'     only whole calls, or only the step of a
//           | 'level=node'                     hierarchical algorithm among one rank per node,
//                                              or only its steps within one node (without:
//                                              all three)
//           | 'mem=host' | 'mem=device'        only calls on communicators where no rank, or
//                                              some rank, may pass device buffers (without: both)
//           | 'cores=near' | 'cores=far'       only calls of two ranks on one node whose cores
//                                              the ranks last read as near, or far (shm/
//                                              core_distance.h; without: every call)
//           | '@' algorithm                    a name of the registry, or pmpi
//           | '@' algorithm '|' algorithm      a race: both timed on the program's calls, the
//                                              faster kept (coll/select/race.h); host
//                                              algorithms and pmpi only
//   range  := size '-' size
//   size   := digits ('K' | 'M' | 'G')? | 'inf'     (K = 1024; letters in either case)
//
// e.g. allreduce:0-8K:@recursive_doubling#allreduce:8K-inf:np=3-inf:@ring#bcast:@binomial
//      allgather:4K-32K:np=2:@shm|pmpi
// The size of a call is one rank's contribution (count x type size; the per-rank block for
// gather, scatter, allgather and alltoall), equal on every rank. Parsing is strict: an error names
// the token and what is wrong with it. docs/TUNING.md is the user's description.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/select/registry.h"
#include "common/text.h"  // formatSize

namespace overpass {

struct TuneRule {
  enum class Level { kAny, kTeam, kNodes, kNode };
  Collective coll = Collective::kBarrier;
  std::size_t minBytes = 0;
  std::size_t maxBytes = std::numeric_limits<std::size_t>::max();  // exclusive; max = inf
  int minRanks = 1;
  int maxRanks = std::numeric_limits<int>::max();  // exclusive; max = inf
  int minNodes = 1;                                // nodes the team spans
  int maxNodes = std::numeric_limits<int>::max();  // exclusive; max = inf
  Level level = Level::kAny;
  std::optional<CallMemory> mem;      // none: both
  std::optional<CoreDistance> cores;  // none: every call, read or not
  const Algorithm* algorithm = nullptr;
  const Algorithm* rival = nullptr;  // a race's second algorithm; none: no race
  std::string text;                  // the rule as written, for messages and overpass-info

  // call.acrossNodes: the inter-node step of a hierarchical algorithm; call.withinNode: a step
  // among the ranks of one node.
  bool matches(const CallShape& call) const {
    if (call.coll != coll || call.bytes < minBytes || call.bytes >= maxBytes ||
        call.teamSize < minRanks || call.teamSize >= maxRanks || call.nodes < minNodes ||
        call.nodes >= maxNodes || (mem && *mem != call.mem) || (cores && *cores != call.cores))
      return false;
    switch (level) {
      case Level::kAny:
        return true;
      case Level::kTeam:
        return !call.acrossNodes && !call.withinNode;
      case Level::kNodes:
        return call.acrossNodes;
      case Level::kNode:
        return call.withinNode;
    }
    return false;
  }
};

// Parses `text` into rules, in the order written. On error returns nullopt and sets *error to a
// message naming the bad token. An empty text is no rule.
std::optional<std::vector<TuneRule>> parseTune(std::string_view text, std::string* error);

// Sizes are parsed and formatted as the grammar writes them by parseSize (with inf) and
// formatSize of common/text.h.

}  // namespace overpass
