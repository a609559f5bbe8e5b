// Allreduce by recursive doubling.
//
// Steps: with p2 the largest power of two <= p and r = p - p2, the first 2r ranks pair up and
// each even one hands its vector to the odd one above it, which reduces it in. The p2 remaining
// ranks then exchange their whole vector with the partner at distance 1, 2, 4, ... and reduce;
// finally the odd ranks return the result to their even partners.
// Cost: (log2(p2) + 2 [if r > 0]) x (alpha + n beta + n gamma).
// Preconditions: a commutative operation. Both partners of a step compute lower op higher, so
// every rank ends with bitwise the same vector, also for non-power-of-two p.
// Result: recvbuf on every rank.
#include <cstring>
#include <utility>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status allreduceRecursiveDoubling(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && args.bytes)
      std::memmove(args.recvbuf, args.sendbuf, args.bytes);
    return Status::kOk;
  }

  int p2 = 1;
  while (p2 * 2 <= size) p2 *= 2;
  const int extra = size - p2;
  auto* cur = static_cast<unsigned char*>(args.recvbuf);
  auto* other = static_cast<unsigned char*>(team.scratch.get(0, args.bytes));
  auto reduce = [&](const void* in, void* inout) {
    reduceLocal(in, inout, args.count, args.type, args.op, args.user);
  };
  // The input is copied into recvbuf while the first exchange is in flight (sending straight
  // from sendbuf), so that peers are not held up behind the local copy.
  bool copyPending = args.sendbuf != args.recvbuf;
  auto exchange = [&](std::span<const P2POp> ops) {
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start(ops, tag, &request));
    if (copyPending) std::memcpy(args.recvbuf, args.sendbuf, args.bytes);
    copyPending = false;
    return team.transport.wait(request);
  };
  auto mine = [&]() -> const void* { return copyPending ? args.sendbuf : cur; };

  int newRank;
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {  // hands its data to rank + 1 and waits for the result
      OVERPASS_CHECK(team.transport.send(mine(), args.bytes, rank + 1, tag));
      return team.transport.recv(cur, args.bytes, rank + 1, tag);
    }
    const P2POp op = P2POp::recv(other, args.bytes, rank - 1);
    OVERPASS_CHECK(exchange({&op, 1}));
    reduce(other, cur);
    newRank = rank / 2;
  } else {
    newRank = rank - extra;
  }

  for (int mask = 1; mask < p2; mask <<= 1) {
    const int peerNew = newRank ^ mask;
    const int peer = peerNew < extra ? peerNew * 2 + 1 : peerNew + extra;
    const P2POp ops[2] = {P2POp::recv(other, args.bytes, peer),
                          P2POp::send(mine(), args.bytes, peer)};
    OVERPASS_CHECK(exchange(ops));
    if (peer < rank) {
      reduce(other, cur);
    } else {
      reduce(cur, other);
      std::swap(cur, other);
    }
  }
  if (cur != args.recvbuf) std::memcpy(args.recvbuf, cur, args.bytes);
  if (rank < 2 * extra) return team.transport.send(args.recvbuf, args.bytes, rank - 1, tag);
  return Status::kOk;
}

}  // namespace overpass
