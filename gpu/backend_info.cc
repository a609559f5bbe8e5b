#include "gpu/backend_info.h"

namespace overpass {

#ifdef OVERPASS_HAVE_CUDA
std::string cudaBackendInfo();  // gpu/cuda_backend_info.cu
#endif

std::string gpuBackends() {
#ifdef OVERPASS_HAVE_CUDA
  return "host, " + cudaBackendInfo();
#else
  return "host (built without the CUDA toolkit)";
#endif
}

}  // namespace overpass
