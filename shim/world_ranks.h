// World ranks: those of a communicator's ranks (a local query, no communication), and a list of
// them as text for messages.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace overpass::shim {

inline std::vector<int> worldRanks(MPI_Comm comm) {
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(size), out(size);
  for (int i = 0; i < size; ++i) ranks[i] = i;
  PMPI_Group_translate_ranks(group, size, ranks.data(), world, out.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return out;
}

// "0-3,5,7-9" for increasing ranks; cut past about 120 characters.
inline std::string rankRanges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += '-' + std::to_string(ranks[j]);
    i = j + 1;
    if (out.size() > 120 && i < ranks.size()) {
      out += ",... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
  }
  return out;
}

}  // namespace overpass::shim
