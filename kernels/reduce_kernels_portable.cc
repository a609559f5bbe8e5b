// The reduction kernels compiled for portable (flags in coll/CMakeLists.txt).
#define OVERPASS_KERNEL_TABLE_FN kernelTablePortable
#include "kernels/reduce_kernels_body.h"
