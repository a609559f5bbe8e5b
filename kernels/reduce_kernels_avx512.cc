// The reduction kernels compiled for avx512 (flags in coll/CMakeLists.txt).
#define OVERPASS_KERNEL_TABLE_FN kernelTableAvx512
#include "kernels/reduce_kernels_body.h"
