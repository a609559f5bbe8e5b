// The shared-memory reduction step that the shm allreduce, reduce and reduce_scatter_block
// share: after a round in which every rank of the node has put its contribution in its buffer,
// this rank combines one slice of all of them in rank order (the sequence of every rank-order
// algorithm, coll/rank_order_reduce_scatter.h), writing the partial results into the slice of
// the peers' buffers that only it reads and the final one into `out`.
#pragma once

#include <cstddef>

#include "coll/coll_args.h"
#include "coll/reduce_kernels.h"
#include "shm/channel.h"

namespace overpass {

// Combines `elements` elements at byte `offset` of every rank's last-round buffer into `out`.
inline void shmReduceSlice(const CollArgs& args, ShmChannel& ch, std::size_t offset,
                           std::size_t elements, void* out) {
  const unsigned char* acc = ch.peer(0) + offset;
  for (int q = 1; q < ch.size(); ++q) {
    unsigned char* target =
        q == ch.size() - 1 ? static_cast<unsigned char*>(out) : ch.peer(q) + offset;
    reduceInto(acc, ch.peer(q) + offset, target, elements, args.type, args.op, args.user);
    acc = target;
  }
}

}  // namespace overpass
