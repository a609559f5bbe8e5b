// Allreduce by recursive doubling.
//
// Steps: with p2 the largest power of two <= p and r = p - p2, the first 2r ranks pair up and
// each even one hands its vector to the odd one above it, which reduces it in (the fold of
// coll/math/pow2_fold.h and coll/phases/pow2_fold.h). The p2 remaining
// ranks then exchange their whole vector with the partner at distance 1, 2, 4, ... and reduce;
// finally the odd ranks return the result to their even partners.
// Cost: (log2(p2) + 2 [if r > 0]) x (alpha + n beta + n gamma).
// Preconditions: a commutative operation. Both partners of a step compute lower op higher, so
// every rank ends with bitwise the same vector, also for non-power-of-two p.
// Result: recvbuf on every rank.
#include <cstring>
#include <utility>

#include "coll/algorithms.h"
#include "coll/math/pow2_fold.h"
#include "coll/phases/pow2_fold.h"
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

  const Pow2Fold fold(size);
  auto* cur = static_cast<unsigned char*>(args.recvbuf);
  auto* other = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, args.bytes));
  auto reduce = [&](const void* in, void* inout) {
    reduceLocal(in, inout, args.count, args.type, args.op, args.user);
  };
  // The input is copied into recvbuf while the first exchange is in flight (sending straight
  // from sendbuf), so that peers are not held up behind the local copy.
  bool copyPending = args.sendbuf != args.recvbuf;
  auto copyIn = [&] {
    if (copyPending) std::memcpy(args.recvbuf, args.sendbuf, args.bytes);
    copyPending = false;
  };
  auto mine = [&]() -> const void* { return copyPending ? args.sendbuf : cur; };

  if (fold.foldedOut(rank))  // hands its data to rank + 1 and waits for the result
    return foldOut(team, tag, fold, mine(), args.bytes, cur, args.bytes);
  if (fold.absorbs(rank)) {
    OVERPASS_CHECK(foldReceive(team, tag, fold, other, args.bytes, copyIn));
    reduce(other, cur);
  }

  const int newRank = fold.virtualRank(rank);
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    const int peer = fold.realRank(newRank ^ mask);
    const P2POp ops[2] = {P2POp::recv(other, args.bytes, peer),
                          P2POp::send(mine(), args.bytes, peer)};
    OVERPASS_CHECK(exchangeWhile(team.transport, ops, tag, copyIn));
    if (peer < rank) {
      reduce(other, cur);
    } else {
      reduce(cur, other);
      std::swap(cur, other);
    }
  }
  if (cur != args.recvbuf) std::memcpy(args.recvbuf, cur, args.bytes);
  if (fold.absorbs(rank)) return foldHandBack(team, tag, fold, args.recvbuf, args.bytes);
  return Status::kOk;
}

}  // namespace overpass
