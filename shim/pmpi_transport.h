// Transport over the MPI library's point-to-point calls (PMPI) on a communicator the shim
// duplicated for itself, so Overpass's messages never match the application's.
#pragma once

#include <mpi.h>

#include <utility>
#include <vector>

#include "common/bootstrap.h"
#include "transport/transport.h"

namespace overpass::shim {

class PmpiTransport final : public Transport {
 public:
  // `crowded`: ranks outnumber the node's cores (a wait then gives its core away between polls).
  PmpiTransport(MPI_Comm comm, bool crowded);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status start(std::span<const P2POp> ops, int tag, Request* request) override;
  Status test(Request& request, bool* done) override;
  Status wait(Request& request) override;
  // The MPI error code of the last failure not yet taken (MPI_SUCCESS: none), to raise through the
  // application's error handler; taking it clears it, so that a later failure of another kind
  // (the UCX part of a SplitTransport) is not reported with a stale code.
  int takeLastError() { return std::exchange(lastError_, MPI_SUCCESS); }

 private:
  Status fail(int rc, const char* what);

  MPI_Comm comm_;
  bool crowded_;
  int rank_ = 0, size_ = 1;
  int lastError_ = MPI_SUCCESS;
};

class PmpiBootstrap final : public Bootstrap {
 public:
  explicit PmpiBootstrap(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allgather(const void* in, void* out, std::size_t bytes) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace overpass::shim
