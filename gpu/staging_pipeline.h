// A collective on device buffers, moved through host memory chunk by chunk so that the copies
// and the host work overlap: while the host step of chunk k runs, chunk k + 1 is on its way up
// from the device (lane kUp of gpu/memory.h) and chunk k - 1 on its way down (lane kDown).
//
// Host slots (`depth` per direction, one chunk each) are reused round-robin: chunk k + 1 is
// copied up only once the slot it reuses is free (its step done; in place, its copy down done),
// and the step of chunk k writes its output slot only once that slot's previous copy down is
// done. With depth 3 the three stages run at once; depth 2 overlaps only the copy up.
#pragma once

#include <cstddef>
#include <functional>

#include "gpu/memory.h"

namespace overpass {

struct PipelinePlan {
  std::size_t bytes = 0;  // the whole buffer
  std::size_t chunk = 0;  // bytes per step (a multiple of the element size), > 0
  int depth = 3;          // host slots per direction, >= 2
};

// The host work on bytes [offset, offset + bytes): reads `in`, writes `out` (the same pointer in
// place; `in` null when the rank has no input, `out` null when it has no output).
using PipelineStep =
    std::function<Status(std::size_t offset, std::size_t bytes, const void* in, void* out)>;

// Host memory the pipeline needs: its slots.
inline std::size_t pipelineStagingBytes(const PipelinePlan& plan) {
  return 2 * static_cast<std::size_t>(plan.depth < 2 ? 2 : plan.depth) * plan.chunk;
}

// `in` and `out`: this rank's buffers (null: none), in device memory where `inDevice` and
// `outDevice` say (the caller classified them); in == out: in place. Buffers on the host are read
// and written in place, so a call with no device buffer runs the steps straight on them.
// `staging`: pipelineStagingBytes.
Status runPipelined(DeviceMemory& memory, const void* in, bool inDevice, void* out, bool outDevice,
                    const PipelinePlan& plan, unsigned char* staging, const PipelineStep& step);

}  // namespace overpass
