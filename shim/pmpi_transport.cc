#include "shim/pmpi_transport.h"

#include <algorithm>
#include <climits>

#include "common/log.h"
#include "common/progress.h"

namespace overpass::shim {
namespace {

// Messages larger than an int count of bytes go as several messages, in order.
constexpr std::size_t kMaxMessage = std::size_t{1} << 30;

}  // namespace

PmpiTransport::PmpiTransport(MPI_Comm comm, bool crowded) : comm_(comm), crowded_(crowded) {
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
}

namespace {

struct PmpiBatch final : Transport::Batch {
  std::vector<MPI_Request> requests;
  std::vector<bool> receives;  // per request

  // Dropped with requests still posted (an algorithm's error path): receives are cancelled, so
  // that they cannot match a later call's messages; sends are released to complete on their own.
  ~PmpiBatch() override {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      if (receives[i]) {
        PMPI_Cancel(&requests[i]);
        PMPI_Wait(&requests[i], MPI_STATUS_IGNORE);
      } else {
        PMPI_Request_free(&requests[i]);
      }
    }
  }
};

}  // namespace

Status PmpiTransport::fail(int rc, const char* what) {
  lastError_ = rc;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  PMPI_Error_string(rc, text, &len);
  OVERPASS_ERROR("point-to-point %s failed: %s", what, text);
  return Status::kTransportError;
}

Status PmpiTransport::start(std::span<const P2POp> ops, int tag, Request* request) {
  auto batch = std::make_unique<PmpiBatch>();
  batch->requests.reserve(ops.size());
  batch->receives.reserve(ops.size());
  for (const P2POp& op : ops) {
    auto* p = static_cast<unsigned char*>(op.buf);
    std::size_t left = op.bytes;
    do {  // a zero-byte operation is still one message
      const int n = static_cast<int>(std::min(left, kMaxMessage));
      MPI_Request r;
      const int rc = op.kind == P2POp::Kind::kSend
                         ? PMPI_Isend(p, n, MPI_BYTE, op.peer, tag, comm_, &r)
                         : PMPI_Irecv(p, n, MPI_BYTE, op.peer, tag, comm_, &r);
      if (rc != MPI_SUCCESS) {
        PMPI_Waitall(static_cast<int>(batch->requests.size()), batch->requests.data(),
                     MPI_STATUSES_IGNORE);
        return fail(rc, "post");
      }
      batch->requests.push_back(r);
      batch->receives.push_back(op.kind == P2POp::Kind::kRecv);
      p += n;
      left -= n;
    } while (left > 0);
  }
  *request = std::move(batch);
  return Status::kOk;
}

Status PmpiTransport::test(Request& request, bool* done) {
  auto& batch = static_cast<PmpiBatch&>(*request);
  int flag = 0;
  const int rc = PMPI_Testall(static_cast<int>(batch.requests.size()), batch.requests.data(), &flag,
                              MPI_STATUSES_IGNORE);
  *done = flag != 0 || rc != MPI_SUCCESS;
  if (*done) {
    request.reset();
    noteProgress();
  }
  return rc == MPI_SUCCESS ? Status::kOk : fail(rc, "completion");
}

// Polls rather than MPI_Waitall, so that the other outstanding collectives progress meanwhile
// (common/progress.h). Where ranks outnumber cores the core goes to whoever shares it after a
// while; elsewhere never, as the shared-memory channel's waits (shm/channel.h): a yield costs a
// kernel entry (about 2 us here) when the message lands during it, and under other processes'
// load hands the core to them for a whole time slice.
Status PmpiTransport::wait(Request& request) {
  return pollUntilDone(request, crowded_);
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
