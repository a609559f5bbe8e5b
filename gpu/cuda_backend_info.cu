// Compiled by nvcc when the CUDA toolkit is found. Uses only the toolkit's headers: the library
// must load on machines without a CUDA driver or runtime.
#include <cuda_runtime_api.h>

#include <string>

namespace overpass {

std::string cudaBackendInfo() {
  return "cuda (compiled with CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
         std::to_string(CUDART_VERSION % 1000 / 10) + ")";
}

}  // namespace overpass
