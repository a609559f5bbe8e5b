// Which memory backends this build of Overpass contains. The host backend is always built; the
// CUDA backend only when the CUDA toolkit was found at build time (OVERPASS_ENABLE_CUDA), and it
// never makes the library depend on a CUDA driver or runtime at load time.
#pragma once

#include <string>

namespace overpass {

std::string gpuBackends();

}  // namespace overpass
