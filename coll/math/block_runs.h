// Runs of blocks of a BlockLayout (coll/coll_args.h) that travel as one message: the blocks of a
// subtree, or of a node, packed back to back in a given order of ranks. Where the layout already
// holds them back to back in that order (the usual contiguous displacements, ranks in order), the
// root of gatherv or scatterv receives or sends the run in place, else through a packed copy.
// Pure arithmetic, unit-tested (tests/unit/coll_math_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "coll/coll_args.h"

namespace overpass {

// The bytes of the blocks of ranks rankOf(0) .. rankOf(count - 1) of `layout`.
template <class RankOf>
std::size_t runBytes(const BlockLayout& layout, int count, RankOf rankOf) {
  std::size_t bytes = 0;
  for (int i = 0; i < count; ++i) bytes += layout.bytes[rankOf(i)];
  return bytes;
}

// Where those blocks lie back to back in `layout` in that order (empty blocks, whose offsets do
// not matter, skipped): the offset of the first byte of the run, else nullopt. A run of empty
// blocks lies at offset 0.
template <class RankOf>
std::optional<std::ptrdiff_t> backToBack(const BlockLayout& layout, int count, RankOf rankOf) {
  std::optional<std::ptrdiff_t> start, end;
  for (int i = 0; i < count; ++i) {
    const int q = rankOf(i);
    if (layout.bytes[q] == 0) continue;
    if (end && *end != layout.offset[q]) return std::nullopt;
    if (!start) start = layout.offset[q];
    end = layout.offset[q] + static_cast<std::ptrdiff_t>(layout.bytes[q]);
  }
  return start ? start : std::optional<std::ptrdiff_t>{0};
}

// The sum of `count` block sizes of a header (the vector collectives' headers carry sizes as
// uint64).
inline std::size_t sumOf(const std::uint64_t* sizes, int count) {
  std::size_t bytes = 0;
  for (int i = 0; i < count; ++i) bytes += static_cast<std::size_t>(sizes[i]);
  return bytes;
}

}  // namespace overpass
