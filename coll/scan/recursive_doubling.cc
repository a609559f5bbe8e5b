// Scan and exscan by recursive doubling: in round d = 1, 2, 4, ... rank r sends its partial
// (the combination of x(r-2d+1) .. xr, clipped at rank 0) to r + d and combines the partial of
// r - d on its left. Operands stay in rank order (any operation, commutative or not), but the
// grouping is not the left fold: not for deterministic mode.
// Cost: ceil(log2 p) (alpha + n beta + n gamma).
// Preconditions: none (in place: sendbuf == recvbuf).
// Result: scan: x0 op ... op xr at recvbuf of rank r; exscan: x0 op ... op x(r-1), rank 0's
// recvbuf untouched.
#include <cstring>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {
namespace {

Status prefixDoubling(const CollArgs& args, Team& team, bool inclusive) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  // scan: the partial is the result, in recvbuf; exscan: the partial in scratch, and the
  // exclusive prefix (x(r-2d+1) .. x(r-1)) in recvbuf from the first round that brings one.
  auto* partial = inclusive
                      ? static_cast<unsigned char*>(args.recvbuf)
                      : static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPartial, n));
  if (partial != args.sendbuf) std::memcpy(partial, args.sendbuf, n);
  auto* incoming = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, n));
  bool haveExclusive = false;
  for (int d = 1; d < size; d *= 2) {
    P2POp ops[2];
    int k = 0;
    const bool receives = rank - d >= 0, sends = rank + d < size;
    if (receives) ops[k++] = P2POp::recv(incoming, n, rank - d);
    if (sends) ops[k++] = P2POp::send(partial, n, rank + d);
    if (k == 0) break;
    OVERPASS_CHECK(team.transport.exchange({ops, static_cast<std::size_t>(k)}, tag));
    if (!receives) continue;
    if (!inclusive) {
      if (haveExclusive)
        reduceLocal(incoming, args.recvbuf, args.count, args.type, args.op, args.user);
      else
        std::memcpy(args.recvbuf, incoming, n);
      haveExclusive = true;
    }
    if (sends || inclusive)  // the last round's partial is needed only for scan's result
      reduceLocal(incoming, partial, args.count, args.type, args.op, args.user);
  }
  return Status::kOk;
}

}  // namespace

Status scanRecursiveDoubling(const CollArgs& args, Team& team) {
  return prefixDoubling(args, team, true);
}

Status exscanRecursiveDoubling(const CollArgs& args, Team& team) {
  return prefixDoubling(args, team, false);
}

}  // namespace overpass
