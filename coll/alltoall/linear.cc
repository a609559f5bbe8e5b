// Alltoall with every exchange posted up front, in a bounded window: for medium blocks.
//
// Steps: the p - 1 exchanges of rank r (send block r + s to rank r + s, receive block r - s from
// rank r - s, s = 1..p-1) are posted in batches of kAlltoallLinearBatch consecutive s, each batch
// started before the previous one is waited for (coll/phases/windowed_exchange.h), so at most
// two batches (2 x kAlltoallLinearBatch exchanges) are in flight. Every rank posts batch b with
// the same s as its peers, so every send of a batch meets a receive of the same batch. The own
// block is copied while the first batch is in flight.
// Cost: every block still leaves through the one link, (p - 1) n beta, n = one block; the
// latencies of one batch overlap, so about ceil((p - 1) / kAlltoallLinearBatch) alpha rounds
// (optimistic: the per-message software overhead is paid p - 1 times, and up to
// 2 x kAlltoallLinearBatch peers sending to one rank at once contend for it, which the model does
// not capture; pairwise exchange, one peer at a time, avoids that contention for large blocks).
// Preconditions: sendbuf and recvbuf do not overlap. Result: block j of rank i's sendbuf at block
// i of rank j's recvbuf.
#include "coll/algorithms.h"
#include "coll/phases/alltoall_blocks.h"
#include "coll/phases/windowed_exchange.h"

namespace overpass {

Status alltoallLinear(const CollArgs& args, Team& team) {
  AlltoallBlocks b(args, team);
  if (b.empty()) return Status::kOk;
  const int rank = b.rank, size = b.size;
  return windowedExchange<kAlltoallLinearBatch>(
      team, b.tag,
      [&](int t, P2POp* ops) {
        const int dst = (rank + t) % size, src = (rank - t + size) % size;
        ops[0] = P2POp::recv(b.recv(src), b.n, src);
        ops[1] = P2POp::send(b.send(dst), b.n, dst);
        return std::size_t{2};
      },
      [&] {
        b.copyOwn();
        return Status::kOk;
      });
}

}  // namespace overpass
