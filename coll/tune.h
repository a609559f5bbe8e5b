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
//           | '@' algorithm                    a name of the registry, or pmpi
//   range  := size '-' size
//   size   := digits ('K' | 'M' | 'G')? | 'inf'     (K = 1024; letters in either case)
//
// e.g. allreduce:0-8K:@recursive_doubling#allreduce:8K-inf:np=3-inf:@ring#bcast:@binomial
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

#include "coll/registry.h"
#include "common/config.h"  // formatSize

namespace overpass {

struct TuneRule {
  enum class Level { kAny, kTeam, kNodes, kNode };
  Collective coll = Collective::kBarrier;
  std::size_t minBytes = 0;
  std::size_t maxBytes = std::numeric_limits<std::size_t>::max();  // exclusive; max = inf
  int minRanks = 1;
  int maxRanks = std::numeric_limits<int>::max();  // exclusive; max = inf
  Level level = Level::kAny;
  const Algorithm* algorithm = nullptr;
  std::string text;  // the rule as written, for messages and overpass-info

  // `acrossNodes`: the call is the inter-node step of a hierarchical algorithm; `withinNode`: a
  // step among the ranks of one node.
  bool matches(Collective c, std::size_t bytes, int ranks, bool acrossNodes = false,
               bool withinNode = false) const {
    if (c != coll || bytes < minBytes || bytes >= maxBytes || ranks < minRanks || ranks >= maxRanks)
      return false;
    switch (level) {
      case Level::kAny:
        return true;
      case Level::kTeam:
        return !acrossNodes && !withinNode;
      case Level::kNodes:
        return acrossNodes;
      case Level::kNode:
        return withinNode;
    }
    return false;
  }
};

// Parses `text` into rules, in the order written. On error returns nullopt and sets *error to a
// message naming the bad token. An empty text is no rule.
std::optional<std::vector<TuneRule>> parseTune(std::string_view text, std::string* error);

// Sizes are formatted as the grammar writes them by formatSize (common/config.h).

}  // namespace overpass
