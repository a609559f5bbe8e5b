// Alltoallv with every exchange posted up front, in a bounded window (as the alltoall linear):
// the p - 1 exchanges of rank r (to r + s, from r - s) in batches of kAlltoallLinearBatch
// consecutive s, each batch started before the previous one is waited for
// (coll/phases/windowed_exchange.h); empty blocks are neither sent nor received (each rank knows
// what it sends and receives). The own block is copied while the first batch is in flight.
// Cost: about ceil((p - 1) / kAlltoallLinearBatch) alpha rounds + (bytes sent) beta.
// Preconditions: sendbuf and recvbuf do not overlap (the shim passes a copy in place).
// Result: block q of rank r's send blocks at block r of rank q's receive blocks.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/windowed_exchange.h"

namespace overpass {

Status alltoallvLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const BlockLayout &sb = args.sendBlocks, &rb = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  return windowedExchange<kAlltoallLinearBatch>(
      team, static_cast<int>(args.coll),
      [&](int t, P2POp* ops) {
        const int dst = (rank + t) % size, src = (rank - t + size) % size;
        std::size_t n = 0;
        if (rb.bytes[src]) ops[n++] = P2POp::recv(out + rb.offset[src], rb.bytes[src], src);
        if (sb.bytes[dst]) ops[n++] = P2POp::send(in + sb.offset[dst], sb.bytes[dst], dst);
        return n;
      },
      [&] {
        if (rb.bytes[rank])
          std::memcpy(out + rb.offset[rank], in + sb.offset[rank], rb.bytes[rank]);
        return Status::kOk;
      });
}

}  // namespace overpass
