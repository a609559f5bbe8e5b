#include "coll/selector.h"

namespace overpass {

namespace {

// Large allreduces go around the ring (bandwidth-optimal) from this size and 3 ranks on; with 2
// ranks recursive doubling moves the same bytes in one step.
constexpr std::size_t kRingBytes = std::size_t{256} << 10;

}  // namespace

// Defaults until the size-ranged rules (OVERPASS_TUNE) and the cost model arrive: the ring for
// large allreduces, otherwise the collective's first Overpass algorithm.
const Algorithm& selectAlgorithm(const SelectionInput& input, const Config& /*config*/) {
  if (input.coll == Collective::kAllreduce && input.bytes >= kRingBytes && input.teamSize > 2)
    return *findAlgorithm(Collective::kAllreduce, "ring");
  for (const Algorithm& a : algorithms())
    if (a.coll == input.coll && !a.isPmpi()) return a;
  return pmpiAlgorithm(input.coll);
}

}  // namespace overpass
