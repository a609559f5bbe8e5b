// Allreduce around a ring: reduce-scatter, then allgather.
//
// Steps: the vector is cut into p blocks (sizes differ by at most one element). Reduce-scatter:
// in step k (0..p-2) rank r sends its partial sum of block (r - k - 1) mod p to r + 1 and reduces
// the partial of block (r - k - 2) mod p that arrives from r - 1 into its own; after p - 1 steps
// rank r holds block r reduced over all ranks. Allgather: p - 1 more steps pass the finished
// blocks around the ring.
// Cost: 2(p - 1) x (alpha + n/p beta) + (p - 1)/p n gamma: bandwidth-optimal, latency linear in
// p, so for large vectors.
// Preconditions: a commutative operation. Every block is reduced on one rank and then copied, so
// every rank ends with bitwise the same vector. Result: recvbuf on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/reduce_kernels.h"

namespace overpass {

Status allreduceRing(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const bool copy = args.sendbuf != args.recvbuf;
  if (size == 1 || args.count == 0) {
    if (copy && args.bytes) std::memmove(args.recvbuf, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  const std::size_t element = args.bytes / args.count;
  const std::size_t base = args.count / size, extra = args.count % size;
  auto first = [&](int b) { return b * base + std::min<std::size_t>(b, extra); };
  auto elements = [&](int b) { return base + (static_cast<std::size_t>(b) < extra ? 1 : 0); };
  auto wrap = [&](int b) { return ((b % size) + size) % size; };
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto at = [&](auto* p, int b) { return p + first(b) * element; };
  auto* incoming = static_cast<unsigned char*>(team.scratch.get(0, (base + 1) * element));
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

  for (int k = 0; k < size - 1; ++k) {
    const int sendBlock = wrap(rank - k - 1), recvBlock = wrap(rank - k - 2);
    // Step 0 sends straight from sendbuf and copies the input into recvbuf while in flight.
    const unsigned char* source = k == 0 && copy ? at(in, sendBlock) : at(out, sendBlock);
    const P2POp ops[2] = {P2POp::recv(incoming, elements(recvBlock) * element, left),
                          P2POp::send(source, elements(sendBlock) * element, right)};
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start(ops, tag, &request));
    if (k == 0 && copy) std::memcpy(out, in, args.bytes);
    OVERPASS_CHECK(team.transport.wait(request));
    reduceLocal(incoming, at(out, recvBlock), elements(recvBlock), args.type, args.op, args.user);
  }
  for (int k = 0; k < size - 1; ++k) {
    const int sendBlock = wrap(rank - k), recvBlock = wrap(rank - k - 1);
    OVERPASS_CHECK(team.transport.sendrecv(at(out, sendBlock), elements(sendBlock) * element, right,
                                           at(out, recvBlock), elements(recvBlock) * element, left,
                                           tag));
  }
  return Status::kOk;
}

}  // namespace overpass
