// BlockSplit: how a vector of `count` elements is cut into blocks, the one split every algorithm
// that shares a vector among ranks uses (the ring, Rabenseifner, rank-order and hierarchical
// reductions, the device algorithms), so that every rank, and every phase of one call, derives
// the same block boundaries from the same call.
//
// Remainders: the vector is first cut into `slices` slices whose sizes differ by at most one
// element, the FIRST count % slices slices holding one element more than the others
// (count = 10, 4 slices: 3 3 2 2). The slices are then grouped into `size` blocks of consecutive
// slices: block b holds slices [b slices / size, (b + 1) slices / size). By default there is one
// slice per block (slices = size); the hierarchical reductions group the slices of unequal nodes
// (coll/math/node_slices.h). Where count < slices, the last slices are empty, and where
// slices < size some blocks hold no slice (the hierarchical allreduce of fewer elements than
// ranks per node leaves some blocks empty): every function below still holds, empty blocks have
// 0 bytes at the offset where the next block starts.
#pragma once

#include <algorithm>
#include <cstddef>

#include "coll/coll_args.h"

namespace overpass {

struct BlockSplit {
  std::size_t element, base, extra;  // bytes per element; elements per slice, slices with one more
  int size, slices;

  // args.count elements of args.bytes / args.count bytes (args.count > 0) into `p` blocks, of
  // `s` slices (0: one slice per block).
  BlockSplit(const CollArgs& args, int p, int s = 0)
      : element(args.bytes / args.count),
        base(args.count / (s ? s : p)),
        extra(args.count % (s ? s : p)),
        size(p),
        slices(s ? s : p) {}
  int wrap(int b) const { return ((b % size) + size) % size; }
  int firstSlice(int b) const {
    return slices == size ? b : static_cast<int>(static_cast<long long>(b) * slices / size);
  }
  std::size_t sliceFirst(int s) const { return s * base + std::min<std::size_t>(s, extra); }
  // Block b's first element; first(size) = count, the end of the vector.
  std::size_t first(int b) const { return sliceFirst(firstSlice(b)); }
  std::size_t elements(int b) const { return first(b + 1) - first(b); }
  std::size_t bytes(int b) const { return elements(b) * element; }
  std::size_t offset(int b) const { return first(b) * element; }
  std::size_t maxElements() const {  // of the largest block
    if (slices == size) return base + (extra != 0);
    std::size_t most = 0;
    for (int b = 0; b < size; ++b) most = std::max(most, elements(b));
    return most;
  }
};

}  // namespace overpass
