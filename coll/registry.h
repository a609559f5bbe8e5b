// The registry of algorithms: one table of {collective, name, description, function} for every
// collective. An entry with no function stands for the MPI library's own implementation ("pmpi").
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "coll/coll_args.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

using AlgorithmFn = Status (*)(const CollArgs& args, Team& team);

struct Algorithm {
  Collective coll;
  std::string_view name;
  std::string_view description;
  AlgorithmFn run;  // nullptr: hand the call to the MPI library

  bool isPmpi() const { return run == nullptr; }
};

inline constexpr std::string_view kPmpiName = "pmpi";

std::span<const Algorithm> algorithms();
// Position of `a` in algorithms(): the id used by statistics.
std::size_t algorithmId(const Algorithm& a);
const Algorithm* findAlgorithm(Collective coll, std::string_view name);
const Algorithm& pmpiAlgorithm(Collective coll);
// Names by id, for statistics reports.
std::span<const std::string_view> algorithmNames();

}  // namespace overpass
