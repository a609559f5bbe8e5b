// The rank-order fold of one round's chunks in the node's shared memory (the shm reduce_scatter,
// scan and exscan): out = ((x0 op x1) op x2) ... op x_last over `bytes` bytes at offset `at` of
// every rank's buffer, the running result as the left operand (MPI_Reduce_local's `in`), as
// every rank-order algorithm combines; intermediate results alternate between two scratch
// chunks. last == 0: a copy of rank 0's chunk.
#pragma once

#include <cstddef>
#include <cstring>

#include "coll/coll_args.h"
#include "kernels/reduce_kernels.h"
#include "shm/channel.h"

namespace overpass {

inline void shmFoldInRankOrder(const ShmChannel& ch, const CollArgs& args, int last, std::size_t at,
                               std::size_t bytes, unsigned char* out,
                               unsigned char* const partial[2]) {
  const unsigned char* acc = ch.peer(0) + at;
  if (last == 0) {
    if (out != acc) std::memcpy(out, acc, bytes);
    return;
  }
  const std::size_t count = bytes / (args.bytes / args.count);
  for (int q = 1; q <= last; ++q) {
    unsigned char* to = q == last ? out : partial[q % 2];
    reduceInto(acc, ch.peer(q) + at, to, count, args.type, args.op, args.user);
    acc = to;
  }
}

}  // namespace overpass
