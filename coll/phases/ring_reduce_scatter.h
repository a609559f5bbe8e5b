// The reduce-scatter phase around a ring: the first half of the ring allreduce, and the building
// block of the reduce-scatter-based compositions to come.
//
// The vector of `args.count` elements is cut into p blocks whose sizes differ by at most one
// element. In step k (0..p-2) rank r sends its partial sum of block (r - k - 1) mod p to r + 1
// and reduces the partial of block (r - k - 2) mod p that arrives from r - 1 into its own; after
// p - 1 steps block r of `work` holds the reduction over all ranks (other blocks hold partials).
// Cost: (p - 1) x (alpha + n/p beta + n/p gamma). Preconditions: a commutative operation.
#pragma once

#include <algorithm>
#include <cstddef>

#include "coll/coll_args.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// The vector cut into `slices` slices whose sizes differ by at most one element (the first
// count % slices hold one more), grouped into `size` blocks of consecutive slices: block b holds
// slices [b slices / size, (b + 1) slices / size): at least one each where slices >= size (the
// hierarchical allreduce of fewer elements than ranks per node leaves some blocks empty). By
// default one slice per block; the hierarchical reductions group the slices of unequal nodes
// (coll/math/node_slices.h).
struct RingBlocks {
  std::size_t element, base, extra;  // bytes per element; elements per slice, slices with one more
  int size, slices;

  RingBlocks(const CollArgs& args, int p, int s = 0)
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

// `input` is the rank's vector; `work` receives it (copied while the first exchange is in
// flight, unless they are the same buffer) and ends with the reduced block r. Needs
// args.count > 0 and a team of 2 or more. Uses scratch slot 0.
Status ringReduceScatter(const CollArgs& args, Team& team, const RingBlocks& blocks,
                         const void* input, unsigned char* work);

}  // namespace overpass
