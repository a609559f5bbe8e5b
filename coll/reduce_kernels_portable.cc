// The reduction kernels compiled for portable (flags in coll/CMakeLists.txt).
#define OVERPASS_KERNEL_TABLE_FN kernelTablePortable
#include "coll/reduce_kernels_body.h"
