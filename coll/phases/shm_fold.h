// The rank-order fold of one round's chunks in the node's shared memory (the shm reduce_scatter,
// scan and exscan): per round every rank publishes a part of its input (whole elements, up to
// one buffer), and fold() combines, over `bytes` bytes at offset `at` of every rank's buffer of
// `round` bytes (or at(q) of rank q's, where the ranks lay their buffers out apart),
// out = ((x0 op x1) op x2) ... op x_last, the running result as the
// left operand (MPI_Reduce_local's `in`), as every rank-order algorithm combines; intermediate
// results alternate between two scratch chunks. last == 0: a copy of rank 0's chunk. `own`, when
// given, is this rank's operand, read there instead of from its buffer (which then need not hold
// those bytes).
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "coll/coll_args.h"
#include "coll/team.h"
#include "kernels/reduce_kernels.h"
#include "shm/channel.h"

namespace overpass {

class ShmFold {
 public:
  ShmFold(const CollArgs& args, Team& team)
      : args_(args),
        ch_(*team.shm),
        element_(args.bytes / args.count),
        chunk_(ch_.bufferBytes() / element_ * element_) {
    for (int i = 0; i < 2; ++i)
      partial_[i] = static_cast<unsigned char*>(
          team.scratch.get(i ? ScratchSlot::kIncoming2 : ScratchSlot::kIncoming, chunk_));
  }
  // Bytes per round; 0 where one element is larger than a buffer (alike on every rank: the
  // element size is, so the algorithm declines on all).
  std::size_t chunk() const { return chunk_; }

  template <typename At>
  void fold(int last, std::size_t round, At at, std::size_t bytes, unsigned char* out,
            const unsigned char* own = nullptr) const {
    auto offset = [&](int q) -> std::size_t {
      if constexpr (std::is_invocable_v<At, int>)
        return at(q);
      else
        return at;
    };
    auto operand = [&](int q) {
      return q == ch_.rank() && own ? own : ch_.peer(q, round) + offset(q);
    };
    const unsigned char* acc = operand(0);
    if (last == 0) {
      if (out != acc) std::memcpy(out, acc, bytes);
      return;
    }
    for (int q = 1; q <= last; ++q) {
      unsigned char* to = q == last ? out : partial_[q % 2];
      reduceInto(acc, operand(q), to, bytes / element_, args_.type, args_.op, args_.user);
      acc = to;
    }
  }

 private:
  const CollArgs& args_;
  const ShmChannel& ch_;
  std::size_t element_, chunk_;
  unsigned char* partial_[2];
};

}  // namespace overpass
