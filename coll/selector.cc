#include "coll/selector.h"

namespace overpass {

// Today every collective has one Overpass algorithm, which is the default at every size; the
// size-ranged rules (OVERPASS_TUNE) and the cost model will refine this.
const Algorithm& selectAlgorithm(const SelectionInput& input, const Config& /*config*/) {
  for (const Algorithm& a : algorithms())
    if (a.coll == input.coll && !a.isPmpi()) return a;
  return pmpiAlgorithm(input.coll);
}

}  // namespace overpass
