// Reduce along a binomial tree towards `root`.
//
// Steps: in ranks relative to the root (v), for m = 1, 2, 4, ...: if bit m of v is set, send the
// partial result to v - m and stop; otherwise receive the partial of v + m (if it exists) and
// reduce it in.
// Cost: ceil(log2 p) x (alpha + n beta + n gamma).
// Preconditions: a commutative operation (operands are combined in tree order, not rank order).
// Result: recvbuf at the root; other ranks' recvbuf is not touched (it may be null).
#include <cstring>

#include "coll/algorithms.h"
#include "coll/reduce_kernels.h"

namespace overpass {

Status reduceBinomial(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const bool isRoot = rank == args.root;
  void* acc = isRoot ? args.recvbuf : team.scratch.get(0, args.bytes);
  if (acc != args.sendbuf && args.bytes) std::memmove(acc, args.sendbuf, args.bytes);
  if (size == 1 || args.count == 0) return Status::kOk;
  void* incoming = team.scratch.get(1, args.bytes);
  const int v = (rank - args.root + size) % size;
  for (int mask = 1; mask < size; mask <<= 1) {
    if (v & mask) {
      const int parent = (v - mask + args.root) % size;
      return team.transport.send(acc, args.bytes, parent, tag);
    }
    if (v + mask < size) {
      const int child = (v + mask + args.root) % size;
      OVERPASS_CHECK(team.transport.recv(incoming, args.bytes, child, tag));
      reduceLocal(incoming, acc, args.count, args.type, args.op, args.user);
    }
  }
  return Status::kOk;
}

}  // namespace overpass
