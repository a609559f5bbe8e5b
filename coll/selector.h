// The selector: a pure function of the call's shape, the team and the configuration that picks
// one algorithm from the registry. Every rank of a communicator passes equal inputs, so every rank
// picks the same algorithm.
#pragma once

#include <cstddef>

#include "coll/registry.h"
#include "common/config.h"

namespace overpass {

struct SelectionInput {
  Collective coll;
  std::size_t bytes;  // the size class: bytes of the call as the statistics count them
  int teamSize;
};

const Algorithm& selectAlgorithm(const SelectionInput& input, const Config& config);

}  // namespace overpass
