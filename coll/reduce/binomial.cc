// Reduce along a binomial tree towards `root`.
//
// Steps: in ranks relative to the root (v), for m = 1, 2, 4, ...: if bit m of v is set, send the
// partial result to v - m and stop; otherwise receive the partial of v + m (if it exists) and
// reduce it in. The first child's partial is received where this rank's partial goes (recvbuf at
// the root) and the rank's input reduced into it: two operands, where receiving into scratch and
// combining three buffers measured 0.74-0.89x Open MPI's reduce at np 2 and this 0.93-0.98x
// (docs/PERFORMANCE.md, "The binomial reduce's first child"). In place, the partial starts in
// recvbuf, and the children are received into scratch. A leaf sends straight from its input.
// Cost: ceil(log2 p) x (alpha + n beta + n gamma).
// Preconditions: a commutative operation (operands are combined in tree order, not rank order).
// Result: recvbuf at the root; other ranks' recvbuf is not touched (it may be null).
#include <cstring>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status reduceBinomial(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const bool isRoot = rank == args.root;
  const void* partial = args.sendbuf;  // read-only until the first reduction
  if (size > 1 && args.count > 0) {
    void* own = isRoot ? args.recvbuf : nullptr;  // where this rank's partial is written
    void* incoming = nullptr;
    const int v = (rank - args.root + size) % size;
    for (int mask = 1; mask < size; mask <<= 1) {
      if (v & mask) {
        const int parent = (v - mask + args.root) % size;
        return team.transport.send(partial, args.bytes, parent, tag);
      }
      if (v + mask < size) {
        const int child = (v + mask + args.root) % size;
        if (!own) own = team.scratch.get(ScratchSlot::kPartial, args.bytes);
        if (partial != own && partial == args.sendbuf) {
          OVERPASS_CHECK(team.transport.recv(own, args.bytes, child, tag));
          reduceLocal(partial, own, args.count, args.type, args.op, args.user);
        } else {
          if (!incoming) incoming = team.scratch.get(ScratchSlot::kIncoming, args.bytes);
          OVERPASS_CHECK(team.transport.recv(incoming, args.bytes, child, tag));
          reduceInto(incoming, partial, own, args.count, args.type, args.op, args.user);
        }
        partial = own;
      }
    }
  }
  if (isRoot && partial != args.recvbuf && args.bytes)
    std::memmove(args.recvbuf, partial, args.bytes);
  return Status::kOk;
}

}  // namespace overpass
