// Allreduce along a k-nomial tree (radix k = kAllreduceKnomialRadix = 4): reduce towards rank 0,
// then broadcast back down the same tree.
//
// Steps: at distance d = 1, k, k^2, ... a rank whose base-k digit (rank / d) mod k is j != 0
// sends its partial result to rank - j d and stops; a rank whose digit is 0 receives the partials
// of its up to k - 1 children rank + j d (j = 1..k-1, all posted at once) and reduces them in,
// one while the next is still arriving. Rank 0 ends with the full reduction and sends it back
// down: each rank receives it from its parent, then sends it to its children, farthest level
// first, the k - 1 children of a level in one batch.
// Cost: with L = ceil(log_k p) levels, 2 L alpha + 2 L (k - 1) n beta + L (k - 1) n gamma: fewer
// rounds than recursive doubling for non-power-of-two p (no fold), more bytes, so for small and
// medium vectors on larger teams.
// Preconditions: a commutative operation (partials are combined in tree order). Rank 0 alone
// computes the result and every rank receives a copy, so every rank ends with bitwise the same
// vector. Result: recvbuf on every rank.
#include <cstring>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status allreduceKnomial(const CollArgs& args, Team& team) {
  constexpr int k = kAllreduceKnomialRadix;
  static_assert(k >= 2 && k - 1 <= Scratch::kSlots);
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && n) std::memmove(out, args.sendbuf, n);
    return Status::kOk;
  }

  // Reduce: `partial` is this rank's contribution so far (its input until it reduces something
  // into recvbuf).
  const void* partial = args.sendbuf;
  unsigned char* incoming[k - 1] = {};  // taken by ranks with children
  static constexpr ScratchSlot kChildSlots[k - 1] = {
      ScratchSlot::kIncoming, ScratchSlot::kIncoming2, ScratchSlot::kIncoming3};
  int dist = 1, parent = -1;
  for (; dist < size; dist *= k) {
    const int digit = (rank / dist) % k;
    if (digit != 0) {
      parent = rank - digit * dist;
      break;
    }
    Transport::Request requests[k - 1];
    int children = 0;
    for (; children < k - 1 && rank + (children + 1) * dist < size; ++children) {
      incoming[children] = static_cast<unsigned char*>(team.scratch.get(kChildSlots[children], n));
      const P2POp op = P2POp::recv(incoming[children], n, rank + (children + 1) * dist);
      if (const Status s = team.transport.start({&op, 1}, tag, &requests[children]);
          s != Status::kOk) {
        team.transport.waitAll(requests);  // nothing may stay posted
        return s;
      }
    }
    if (children == 0) continue;
    // The first child's partial and this rank's input are combined into recvbuf in one pass;
    // the others are reduced in as they arrive.
    for (int j = 0; j < children; ++j) {
      if (const Status s = team.transport.wait(requests[j]); s != Status::kOk) {
        team.transport.waitAll(requests);
        return s;
      }
      reduceInto(incoming[j], partial, out, args.count, args.type, args.op, args.user);
      partial = out;
    }
  }
  if (parent >= 0) {
    if (partial != out) {
      // Reduced nothing: the input goes up straight from sendbuf, and the receive of the result
      // is posted with it.
      const P2POp ops[2] = {P2POp::recv(out, n, parent), P2POp::send(partial, n, parent)};
      OVERPASS_CHECK(team.transport.exchange(ops, tag));
    } else {
      OVERPASS_CHECK(team.transport.send(out, n, parent, tag));
      OVERPASS_CHECK(team.transport.recv(out, n, parent, tag));
    }
  }

  // Broadcast: the children of the levels below the one this rank received at, farthest first.
  for (dist /= k; dist >= 1; dist /= k) {
    P2POp ops[k - 1];
    int children = 0;
    for (; children < k - 1 && rank + (children + 1) * dist < size; ++children)
      ops[children] = P2POp::send(out, n, rank + (children + 1) * dist);
    if (children)
      OVERPASS_CHECK(team.transport.exchange({ops, static_cast<std::size_t>(children)}, tag));
  }
  return Status::kOk;
}

}  // namespace overpass
