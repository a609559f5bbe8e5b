// The shared-memory reductions of coll/: shmReduceSlice, the step that the shm allreduce,
// reduce, reduce_scatter_block and the hierarchical allreduce share: after a round in which
// every rank of the node has put its contribution in its buffer, this rank combines one slice of
// all of them in rank order (the sequence of every rank-order algorithm,
// coll/phases/rank_order_reduce_scatter.h), writing the partial results into the slice of the
// peers' buffers that only it reads and the final one into `out`; and shmReduce, the whole shm
// allreduce and reduce.
#pragma once

#include <cstddef>
#include <cstring>

#include "coll/coll_args.h"
#include "coll/team.h"
#include "kernels/reduce_kernels.h"
#include "shm/channel.h"

namespace overpass {

// Combines `elements` elements at byte `offset` of every rank's last-round buffer, of `round`
// bytes (ShmChannel::peer), into `out`.
// `own`, when given, is this rank's contribution, read there instead of from its buffer (which
// then need not hold that slice).
inline void shmReduceSlice(const CollArgs& args, ShmChannel& ch, std::size_t round,
                           std::size_t offset, std::size_t elements, void* out,
                           const void* own = nullptr) {
  auto operand = [&](int q) {
    return q == ch.rank() && own ? static_cast<const unsigned char*>(own)
                                 : ch.peer(q, round) + offset;
  };
  const unsigned char* acc = operand(0);
  for (int q = 1; q < ch.size(); ++q) {
    unsigned char* target =
        q == ch.size() - 1 ? static_cast<unsigned char*>(out) : ch.peer(q, round) + offset;
    reduceInto(acc, operand(q), target, elements, args.type, args.op, args.user);
    acc = target;
  }
}

// x0 op x1 of `n` elements into `out`, the two ranks' operands in rank order: `own` is rank r's
// (`out` may be it), `theirs` the other's, which the combination may overwrite: at rank 0 in
// place the result may not go over its first operand (reduceInto), so it goes into `theirs`
// first and is copied.
inline void reducePair(const CollArgs& args, int r, const unsigned char* own, unsigned char* theirs,
                       unsigned char* out, std::size_t n) {
  if (r == 1) {
    reduceInto(theirs, own, out, n, args.type, args.op, args.user);
  } else if (own != out) {
    reduceInto(own, theirs, out, n, args.type, args.op, args.user);
  } else {
    reduceInto(own, theirs, theirs, n, args.type, args.op, args.user);
    std::memcpy(out, theirs, n * (args.bytes / args.count));
  }
}

// The shm allreduce (root = kEveryRank) or reduce to `root`. Up to kShmOneRoundBytes: one
// round, after which each rank that needs the result combines all p vectors itself; ranks that
// do not need it (reduce) leave without waiting. Above, per chunk of up to one buffer: round 1,
// every rank copies its chunk in (all but its own slice, which it reads from its send buffer)
// and reduces its slice of all chunks; round 2, the ranks that need the result copy every
// finished slice out, around the cache when the result is larger than the rank's share of the
// last-level cache (`streamAbove`, see shm/stream_copy.h). A reduce on two ranks above one
// round is a pipeline instead: the other rank copies its vector in chunk by chunk, the root
// combines each chunk with its own into recvbuf as it arrives.
inline constexpr int kEveryRank = -1;
inline constexpr std::size_t kShmOneRoundBytes = 4096;
Status shmReduce(const CollArgs& args, Team& team, int root);

}  // namespace overpass
