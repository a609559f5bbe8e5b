// Allreduce by Rabenseifner's algorithm: reduce-scatter by recursive halving, then allgather by
// recursive doubling.
//
// Steps: with p2 the largest power of two <= p and r = p - p2, the first 2r ranks pair up and
// each even one hands its vector to the odd one above it, which reduces it in (as
// recursive_doubling.cc does). The vector is cut into p2 blocks whose sizes differ by at most one
// element. Halving: at distance p2/2, p2/4, ..., 1 a rank sends the half of its current block
// range that its partner keeps and reduces the partner's copy of the half it keeps; afterwards
// virtual rank v holds block v reduced over all ranks. Doubling: at distance 1, 2, ..., p2/2
// partners swap the ranges they hold until every rank holds every block. Finally the odd ranks
// of the first 2r return the result to their even partners.
// Cost: 2 log2(p2) alpha + 2 (p2 - 1)/p2 n beta + (p2 - 1)/p2 n gamma, plus, when r > 0,
// 2 alpha + 2 n beta + n gamma for the fold and the hand-back: bandwidth-optimal with
// logarithmic latency, for large vectors; needs count >= p2 to be worth it (smaller counts
// leave blocks empty, and are still correct).
// Preconditions: a commutative operation. Every block is reduced on one rank and then copied, so
// every rank ends with bitwise the same vector. Result: recvbuf on every rank.
#include <cstring>
#include <initializer_list>

#include "coll/algorithms.h"
#include "coll/select/cost_model.h"
#include "kernels/reduce_kernels.h"
#include "coll/phases/ring_reduce_scatter.h"

namespace overpass {

Status allreduceRabenseifner(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && args.bytes) std::memmove(out, args.sendbuf, args.bytes);
    return Status::kOk;
  }

  const int p2 = floorPow2(size);
  const int extra = size - p2;
  const RingBlocks blocks(args, p2);  // block b of the p2 blocks; offset(p2) is the end
  auto* incoming = static_cast<unsigned char*>(team.scratch.get(0, args.bytes));
  auto reduce = [&](const void* in, void* inout, std::size_t bytes) {
    reduceLocal(in, inout, bytes / blocks.element, args.type, args.op, args.user);
  };
  // The input is copied into recvbuf while the first exchange is in flight (sending straight
  // from sendbuf), so that peers are not held up behind the local copy.
  bool copyPending = args.sendbuf != args.recvbuf;
  auto mine = [&]() -> const unsigned char* {
    return copyPending ? static_cast<const unsigned char*>(args.sendbuf) : out;
  };
  // Posts the receive and the send as one batch. Empty ranges (count < p2) are not sent: both
  // partners derive the sizes from the same blocks, so they skip the same messages.
  auto exchange = [&](std::initializer_list<P2POp> list) {
    P2POp ops[2];
    std::size_t n = 0;
    for (const P2POp& op : list)
      if (op.bytes) ops[n++] = op;
    Transport::Request request;
    if (n) OVERPASS_CHECK(team.transport.start({ops, n}, tag, &request));
    if (copyPending) std::memcpy(out, args.sendbuf, args.bytes);
    copyPending = false;
    return n ? team.transport.wait(request) : Status::kOk;
  };
  auto rangeBytes = [&](int firstBlock, int numBlocks) {
    return blocks.offset(firstBlock + numBlocks) - blocks.offset(firstBlock);
  };
  auto realRank = [&](int v) { return v < extra ? v * 2 + 1 : v + extra; };

  int newRank;
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {  // hands its data to rank + 1 and waits for the result
      if (copyPending) {
        const P2POp ops[2] = {P2POp::recv(out, args.bytes, rank + 1),
                              P2POp::send(args.sendbuf, args.bytes, rank + 1)};
        return team.transport.exchange(ops, tag);
      }
      OVERPASS_CHECK(team.transport.send(out, args.bytes, rank + 1, tag));
      return team.transport.recv(out, args.bytes, rank + 1, tag);
    }
    OVERPASS_CHECK(exchange({P2POp::recv(incoming, args.bytes, rank - 1)}));
    reduce(incoming, out, args.bytes);
    newRank = rank / 2;
  } else {
    newRank = rank - extra;
  }

  // Reduce-scatter by recursive halving: [lo, lo + 2 mask) is the range this rank still holds.
  int lo = 0;
  for (int mask = p2 / 2; mask > 0; mask >>= 1) {
    const int peer = realRank(newRank ^ mask);
    const bool upper = (newRank & mask) != 0;
    const int keep = upper ? lo + mask : lo, give = upper ? lo : lo + mask;
    const std::size_t keepBytes = rangeBytes(keep, mask);
    OVERPASS_CHECK(
        exchange({P2POp::recv(incoming, keepBytes, peer),
                  P2POp::send(mine() + blocks.offset(give), rangeBytes(give, mask), peer)}));
    if (keepBytes) reduce(incoming, out + blocks.offset(keep), keepBytes);
    lo = keep;
  }

  // Allgather by recursive doubling: this rank holds the mask blocks from its own aligned start.
  for (int mask = 1; mask < p2; mask <<= 1) {
    const int peerNew = newRank ^ mask;
    const int have = newRank & ~(mask - 1), get = peerNew & ~(mask - 1);
    const int peer = realRank(peerNew);
    OVERPASS_CHECK(
        exchange({P2POp::recv(out + blocks.offset(get), rangeBytes(get, mask), peer),
                  P2POp::send(out + blocks.offset(have), rangeBytes(have, mask), peer)}));
  }
  if (rank < 2 * extra) return team.transport.send(out, args.bytes, rank - 1, tag);
  return Status::kOk;
}

}  // namespace overpass
