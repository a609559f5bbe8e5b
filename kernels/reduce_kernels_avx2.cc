// The reduction kernels compiled for avx2 (flags in coll/CMakeLists.txt).
#define OVERPASS_KERNEL_TABLE_FN kernelTableAvx2
#include "kernels/reduce_kernels_body.h"
