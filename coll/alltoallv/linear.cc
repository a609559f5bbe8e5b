// Alltoallv with every exchange posted up front, in a bounded window (as the alltoall linear):
// the p - 1 exchanges of rank r (to r + s, from r - s) in batches of kAlltoallLinearBatch
// consecutive s, each batch started before the previous one is waited for; empty blocks are
// neither sent nor received (each rank knows what it sends and receives). The own block is copied
// while the first batch is in flight.
// Cost: about ceil((p - 1) / kAlltoallLinearBatch) alpha rounds + (bytes sent) beta.
// Preconditions: sendbuf and recvbuf do not overlap (the shim passes a copy in place).
// Result: block q of rank r's send blocks at block r of rank q's receive blocks.
#include <algorithm>
#include <array>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status alltoallvLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const BlockLayout &sb = args.sendBlocks, &rb = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  auto copyOwn = [&] {
    if (rb.bytes[rank]) std::memcpy(out + rb.offset[rank], in + sb.offset[rank], rb.bytes[rank]);
  };
  constexpr int kBatch = kAlltoallLinearBatch;
  std::array<P2POp, 2 * kBatch> ops[2];
  Transport::Request requests[2];
  int batchIndex = 0;
  for (int s = 1; s < size; s += kBatch, ++batchIndex) {
    const int end = std::min(s + kBatch, size);
    std::array<P2POp, 2 * kBatch>& batch = ops[batchIndex % 2];
    std::size_t count = 0;
    for (int t = s; t < end; ++t) {
      const int dst = (rank + t) % size, src = (rank - t + size) % size;
      if (rb.bytes[src]) batch[count++] = P2POp::recv(out + rb.offset[src], rb.bytes[src], src);
      if (sb.bytes[dst]) batch[count++] = P2POp::send(in + sb.offset[dst], sb.bytes[dst], dst);
    }
    Status status = team.transport.start({batch.data(), count}, tag, &requests[batchIndex % 2]);
    if (status == Status::kOk && batchIndex == 0) copyOwn();
    if (status == Status::kOk && batchIndex > 0)
      status = team.transport.wait(requests[(batchIndex - 1) % 2]);
    if (status != Status::kOk) {
      team.transport.waitAll(requests);  // nothing may stay posted
      return status;
    }
  }
  if (batchIndex > 0) return team.transport.wait(requests[(batchIndex - 1) % 2]);
  copyOwn();  // p = 1: no batch
  return Status::kOk;
}

}  // namespace overpass
