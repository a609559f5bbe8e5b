#include "coll/selector.h"

#include <limits>

namespace overpass {

// Measured crossovers the cost model does not capture (docs/TUNING.md, docs/PERFORMANCE.md).
const std::string_view kDefaultTune = "";

std::optional<Selector> Selector::create(const Config& config, std::vector<std::string>* errors) {
  Selector s;
  s.model_ = {config.costLatency, 1 / config.costBandwidth, 1 / config.costReduceBandwidth};
  std::string error;
  auto defaults = parseTune(kDefaultTune, &error);
  if (!defaults) {  // a defect of this file; the unit tests parse the defaults
    errors->push_back("built-in tune rules: " + error);
    return std::nullopt;
  }
  s.rules_ = std::move(*defaults);
  if (auto user = parseTune(config.tune, &error)) {
    s.rules_.insert(s.rules_.end(), user->begin(), user->end());
  } else {
    errors->push_back("invalid OVERPASS_TUNE: " + error);
  }
  for (std::size_t c = 0; c < kNumCollectives; ++c) {
    if (config.forced[c].empty()) continue;
    const std::string name(collectiveName(static_cast<Collective>(c)));
    auto forced = parseTune(name + ":@" + config.forced[c], &error);
    if (forced) {
      s.rules_.push_back(std::move(forced->front()));
    } else {
      std::string var = "OVERPASS_" + name;
      for (char& ch : var) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      errors->push_back("invalid " + var + ": " + error.substr(error.find("': ") + 3));
    }
  }
  if (!errors->empty()) return std::nullopt;
  return s;
}

Selection Selector::select(const CallShape& call) const {
  Selection s;
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (!it->matches(call.coll, call.bytes, call.teamSize)) continue;
    if (it->algorithm->canServe(call)) {
      s.algorithm = it->algorithm;
      s.rule = &*it;
      return s;
    }
    if (!s.skipped) s.skipped = &*it;
  }
  double best = std::numeric_limits<double>::infinity();
  for (const Algorithm& a : algorithms()) {
    if (a.coll != call.coll || a.cost == nullptr || !a.canServe(call)) continue;
    const double cost = a.cost(call, model_);
    if (cost < best) {
      best = cost;
      s.algorithm = &a;
    }
  }
  if (!s.algorithm) s.algorithm = &pmpiAlgorithm(call.coll);
  return s;
}

}  // namespace overpass
