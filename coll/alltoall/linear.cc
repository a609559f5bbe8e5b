// Alltoall with every exchange posted up front, in a bounded window: for medium blocks.
//
// Steps: the p - 1 exchanges of rank r (send block r + s to rank r + s, receive block r - s from
// rank r - s, s = 1..p-1) are posted in batches of kAlltoallLinearBatch consecutive s, each batch
// started before the previous one is waited for, so at most two batches (2 x kAlltoallLinearBatch
// exchanges) are in flight. Every rank posts batch b with the same s as its peers, so every send
// of a batch meets a receive of the same batch. The own block is copied while the first batch is
// in flight.
// Cost: every block still leaves through the one link, (p - 1) n beta, n = one block; the
// latencies of one batch overlap, so about ceil((p - 1) / kAlltoallLinearBatch) alpha rounds
// (optimistic: the per-message software overhead is paid p - 1 times, and up to
// 2 x kAlltoallLinearBatch peers sending to one rank at once contend for it, which the model does
// not capture; pairwise exchange, one peer at a time, avoids that contention for large blocks).
// Preconditions: sendbuf and recvbuf do not overlap. Result: block j of rank i's sendbuf at block
// i of rank j's recvbuf.
#include <algorithm>
#include <array>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status alltoallLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  auto block = [&](auto* base, int i) { return base + static_cast<std::size_t>(i) * n; };
  constexpr int kBatch = kAlltoallLinearBatch;
  std::array<P2POp, 2 * kBatch> ops[2];
  Transport::Request requests[2];
  int b = 0;
  for (int s = 1; s < size; s += kBatch, ++b) {
    const int end = std::min(s + kBatch, size);
    std::array<P2POp, 2 * kBatch>& batch = ops[b % 2];
    std::size_t count = 0;
    for (int t = s; t < end; ++t) {
      const int dst = (rank + t) % size, src = (rank - t + size) % size;
      batch[count++] = P2POp::recv(block(out, src), n, src);
      batch[count++] = P2POp::send(block(in, dst), n, dst);
    }
    Status status = team.transport.start({batch.data(), count}, tag, &requests[b % 2]);
    if (status == Status::kOk && b == 0) std::memcpy(block(out, rank), block(in, rank), n);
    if (status == Status::kOk && b > 0) status = team.transport.wait(requests[(b - 1) % 2]);
    if (status != Status::kOk) {
      team.transport.waitAll(requests);  // nothing may stay posted
      return status;
    }
  }
  if (b > 0) OVERPASS_CHECK(team.transport.wait(requests[(b - 1) % 2]));
  if (b == 0) std::memcpy(block(out, rank), block(in, rank), n);
  return Status::kOk;
}

}  // namespace overpass
