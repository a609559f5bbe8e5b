// Copies whose destination is not read again soon (a large collective's result, written once
// into the user's buffer): stored around the cache, so that a write costs no read of the line
// it overwrites and does not evict what the next step reads. Plain memcpy for small copies and
// where the CPU has no streaming store.
#pragma once

#include <cstddef>

namespace overpass {

void streamCopy(void* dst, const void* src, std::size_t bytes);

}  // namespace overpass
