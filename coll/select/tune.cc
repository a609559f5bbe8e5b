#include "coll/select/tune.h"

#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

#include "common/text.h"

namespace overpass {
namespace {

constexpr std::size_t kMaxRanks = std::size_t{1} << 30;

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = s.find(sep);
    parts.push_back(trim(s.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    s.remove_prefix(at + 1);
  }
}

// A size of the grammar: common/text.h's, with inf.
std::optional<std::size_t> parseSize(std::string_view s) {
  return overpass::parseSize(s, std::numeric_limits<std::size_t>::max(), {.inf = true});
}

// "lo-hi" (half-open, lo < hi).
bool parseRange(std::string_view s, std::size_t* lo, std::size_t* hi) {
  const std::size_t dash = s.find('-');
  if (dash == std::string_view::npos) return false;
  const auto a = parseSize(s.substr(0, dash)), b = parseSize(s.substr(dash + 1));
  if (!a || !b || *a >= *b) return false;
  *lo = *a;
  *hi = *b;
  return true;
}

// A count field, "np=..." or "nodes=...": N or LO-HI (half-open, HI may be inf), from 1 to
// kMaxRanks, once per rule (*seen); `what` names it in messages ("team size").
bool parseCount(std::string_view f, const std::string& what, bool* seen, int* min, int* max,
                std::string* why) {
  const std::string_view name = f.substr(0, f.find('=') + 1), r = f.substr(name.size());
  std::size_t lo = 0, hi = 0;
  if (const auto exact = parseSize(r); exact && r.find('-') == std::string_view::npos &&
                                       *exact != std::numeric_limits<std::size_t>::max()) {
    lo = *exact;
    hi = *exact + 1;
  } else if (!parseRange(r, &lo, &hi)) {
    *why = "'" + std::string(f) + "' is not a " + what + ": " + std::string(name) + "N or " +
           std::string(name) + "LO-HI (half-open, HI may be inf)";
    return false;
  }
  if (*seen) {
    *why = "'" + std::string(f) + "': a second " + what + " in one rule";
    return false;
  }
  if (lo < 1 || lo > kMaxRanks) {
    *why = "'" + std::string(f) + "': " + what + "s are 1 to " + std::to_string(kMaxRanks);
    return false;
  }
  *seen = true;
  *min = static_cast<int>(lo);
  *max = hi > kMaxRanks ? std::numeric_limits<int>::max() : static_cast<int>(hi);
  return true;
}

// A choice field, "mem=..." or "cores=...": one of `names` (each with its value), once per rule
// (*into already set: a second); `what` names it in messages ("memory").
template <class T>
bool parseChoice(std::string_view f, const std::string& what,
                 std::initializer_list<std::pair<std::string_view, T>> names,
                 std::optional<T>* into, std::string* why) {
  const std::string_view key = f.substr(0, f.find('=') + 1), v = f.substr(key.size());
  if (*into) {
    *why = "'" + std::string(f) + "': a second " + what + " in one rule";
    return false;
  }
  std::string accepted;
  for (const auto& [name, value] : names) {
    if (v == name) {
      *into = value;
      return true;
    }
    accepted += (accepted.empty() ? "" : " or ") + std::string(key) + std::string(name);
  }
  *why = "'" + std::string(f) + "' is not a " + what + ": " + accepted;
  return false;
}

std::string algorithmsOf(Collective coll) {
  std::string names;
  for (const Algorithm& a : algorithms())
    if (a.coll == coll) names += (names.empty() ? "" : ", ") + std::string(a.name);
  return names;
}

std::optional<TuneRule> parseRule(std::string_view text, std::string* why) {
  TuneRule rule;
  rule.text = std::string(text);
  const std::vector<std::string_view> fields = split(text, ':');
  const auto coll = collectiveFromName(fields[0]);
  if (!coll) {
    *why = "'" + std::string(fields[0]) + "' is not a collective (" + std::string(kCollectiveList) +
           ")";
    return std::nullopt;
  }
  rule.coll = *coll;
  bool sized = false, ranked = false, noded = false;
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const std::string_view f = fields[i];
    if (!f.empty() && f.front() == '@') {
      if (rule.algorithm) {
        *why = "'" + std::string(f) + "': a second algorithm in one rule";
        return std::nullopt;
      }
      const std::vector<std::string_view> names = split(f.substr(1), '|');
      if (names.size() > 2) {
        *why = "'" + std::string(f) + "': a race names two algorithms";
        return std::nullopt;
      }
      const Algorithm* named[2] = {nullptr, nullptr};
      for (std::size_t k = 0; k < names.size(); ++k) {
        named[k] = findAlgorithm(rule.coll, names[k]);
        if (!named[k]) {
          *why = "'" + std::string(names[k]) + "' is not an algorithm of " +
                 std::string(collectiveName(rule.coll)) + " (" + algorithmsOf(rule.coll) + ")";
          return std::nullopt;
        }
      }
      if (named[1]) {
        if (named[0] == named[1]) {
          *why = "'" + std::string(f) + "': a race of an algorithm with itself";
          return std::nullopt;
        }
        for (const Algorithm* a : named)
          if (a->kind != AlgorithmKind::kHost && !a->isPmpi()) {
            *why = "'" + std::string(f) + "': " + std::string(a->name) +
                   " cannot race (host algorithms and pmpi only)";
            return std::nullopt;
          }
      }
      rule.algorithm = named[0];
      rule.rival = named[1];
    } else if (f.rfind("np=", 0) == 0) {
      if (!parseCount(f, "team size", &ranked, &rule.minRanks, &rule.maxRanks, why))
        return std::nullopt;
    } else if (f.rfind("nodes=", 0) == 0) {
      if (!parseCount(f, "node count", &noded, &rule.minNodes, &rule.maxNodes, why))
        return std::nullopt;
    } else if (f.rfind("level=", 0) == 0) {
      const std::string_view l = f.substr(6);
      if (rule.level != TuneRule::Level::kAny) {
        *why = "'" + std::string(f) + "': a second level in one rule";
        return std::nullopt;
      }
      if (l == "team") {
        rule.level = TuneRule::Level::kTeam;
      } else if (l == "nodes") {
        rule.level = TuneRule::Level::kNodes;
      } else if (l == "node") {
        rule.level = TuneRule::Level::kNode;
      } else {
        *why = "'" + std::string(f) + "' is not a level: level=team, level=nodes or level=node";
        return std::nullopt;
      }
    } else if (f.rfind("mem=", 0) == 0) {
      if (!parseChoice<CallMemory>(f, "memory",
                                   {{"host", CallMemory::kHost}, {"device", CallMemory::kDevice}},
                                   &rule.mem, why))
        return std::nullopt;
    } else if (f.rfind("cores=", 0) == 0) {
      if (!parseChoice<CoreDistance>(f, "core distance",
                                     {{"near", CoreDistance::kNear}, {"far", CoreDistance::kFar}},
                                     &rule.cores, why))
        return std::nullopt;
    } else if (std::size_t lo = 0, hi = 0; parseRange(f, &lo, &hi)) {
      if (sized) {
        *why = "'" + std::string(f) + "': a second size range in one rule";
        return std::nullopt;
      }
      if (rule.coll == Collective::kBarrier) {
        *why = "'" + std::string(f) + "': barrier has no size (every barrier is 0 bytes)";
        return std::nullopt;
      }
      sized = true;
      rule.minBytes = lo;
      rule.maxBytes = hi;
    } else {
      *why = "'" + std::string(f) +
             "' is neither a size range (LO-HI with K/M/G or inf, LO < HI), np=..., "
             "nodes=..., level=..., mem=..., cores=..., nor @algorithm";
      return std::nullopt;
    }
  }
  if (!rule.algorithm) {
    *why = "no @algorithm";
    return std::nullopt;
  }
  return rule;
}

}  // namespace

std::optional<std::vector<TuneRule>> parseTune(std::string_view text, std::string* error) {
  std::vector<TuneRule> rules;
  if (trim(text).empty()) return rules;
  const std::vector<std::string_view> tokens = split(text, '#');
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string why;
    auto rule = tokens[i].empty() ? std::nullopt : parseRule(tokens[i], &why);
    if (!rule) {
      *error = "token " + std::to_string(i + 1) + " '" + std::string(tokens[i]) +
               "': " + (tokens[i].empty() ? std::string("empty rule") : why);
      return std::nullopt;
    }
    rules.push_back(std::move(*rule));
  }
  return rules;
}

}  // namespace overpass
