#include "coll/select/race.h"

#include <algorithm>
#include <limits>

namespace overpass {

std::array<double, 2> Race::medians(std::optional<int> vote) const {
  if (vote) {
    std::array<double, 2> given{std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::infinity()};
    given[*vote == 1 ? 1 : 0] = 0;
    return given;
  }
  std::array<double, 2> m{};
  for (int r = 0; r < 2; ++r) {
    std::array<std::uint64_t, kTrials> t = times_[r];
    std::sort(t.begin(), t.end());
    m[r] = 0.5 * (static_cast<double>(t[kTrials / 2 - 1]) + static_cast<double>(t[kTrials / 2]));
  }
  return m;
}

void Race::done(std::uint64_t ns) {
  if (step() == Step::kTrial)
    times_[(calls_ / kRun) % 2][calls_ / (2 * kRun) * kRun + calls_ % kRun] = ns;
  if (++calls_ == 2 * kTrials + 1 + (raced_ ? kEvery : kFirstEvery)) {
    calls_ = 0;
    raced_ = true;
  }
}

Race* RaceBook::find(const CallShape& call, const Algorithm& first, const Algorithm& second) {
  const Key key{call.coll, call.bytes, call.count, call.ordered, call.mem, call.cores};
  if (auto it = races_.find(key); it != races_.end()) {
    if (&it->second.first() != &first || &it->second.second() != &second)
      it->second = Race(first, second);
    return &it->second;
  }
  if (races_.size() >= kMaxRaces) return nullptr;
  return &races_.emplace(key, Race(first, second)).first->second;
}

}  // namespace overpass
