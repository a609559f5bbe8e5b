#include "shim/pmpi_transport.h"

#include <algorithm>
#include <climits>

#include "common/log.h"

namespace overpass::shim {
namespace {

// Messages larger than an int count of bytes go as several messages, in order.
constexpr std::size_t kMaxMessage = std::size_t{1} << 30;

}  // namespace

PmpiTransport::PmpiTransport(MPI_Comm comm) : comm_(comm) {
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
}

Status PmpiTransport::exchange(std::span<const P2POp> ops, int tag) {
  requests_.clear();
  int rc = MPI_SUCCESS;
  for (const P2POp& op : ops) {
    auto* p = static_cast<unsigned char*>(op.buf);
    std::size_t left = op.bytes;
    do {  // a zero-byte operation is still one message
      const int n = static_cast<int>(std::min(left, kMaxMessage));
      MPI_Request r;
      rc = op.kind == P2POp::Kind::kSend ? PMPI_Isend(p, n, MPI_BYTE, op.peer, tag, comm_, &r)
                                         : PMPI_Irecv(p, n, MPI_BYTE, op.peer, tag, comm_, &r);
      if (rc != MPI_SUCCESS) break;
      requests_.push_back(r);
      p += n;
      left -= n;
    } while (left > 0);
    if (rc != MPI_SUCCESS) break;
  }
  const int waitRc =
      PMPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  if (rc == MPI_SUCCESS) rc = waitRc;
  if (rc != MPI_SUCCESS) {
    lastError_ = rc;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    PMPI_Error_string(rc, text, &len);
    OVERPASS_ERROR("point-to-point exchange of %zu operation(s) with tag %d failed: %s", ops.size(),
                   tag, text);
    return Status::kTransportError;
  }
  return Status::kOk;
}

PmpiBootstrap::PmpiBootstrap(MPI_Comm comm) : comm_(comm) {
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
}

Status PmpiBootstrap::allgather(const void* in, void* out, std::size_t bytes) {
  if (bytes > INT_MAX) return Status::kInvalidArgument;
  const int rc = PMPI_Allgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes),
                                MPI_BYTE, comm_);
  return rc == MPI_SUCCESS ? Status::kOk : Status::kTransportError;
}

}  // namespace overpass::shim
