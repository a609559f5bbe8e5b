// Bootstrap: the one collective that lower layers (topology, transport, configuration agreement)
// may use during initialisation: an allgather of equal-sized byte records among the ranks of the
// world. The shim implements it with PMPI on a communicator of its own; tests implement it with
// threads.
#pragma once

#include <cstddef>

#include "common/status.h"

namespace overpass {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Gathers `bytes` bytes from every rank into `out` (size() * bytes), ordered by rank.
  virtual Status allgather(const void* in, void* out, std::size_t bytes) = 0;
};

}  // namespace overpass
