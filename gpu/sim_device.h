/* The simulated device: a stand-in for GPU memory on machines without a GPU, for tests only.
 *
 * Device memory is a window of the address space that the host cannot touch: pages there are
 * mapped without access rights, so any direct read or write (by Overpass or by the MPI library
 * underneath) crashes the program. Each allocation is also mapped read-write at the same offset in
 * an alias window; only the simulated backend's copies (gpu/sim_memory.cc) and the test program
 * (to fill and check buffers) use the alias. With OVERPASS_SIM_DEVICE=1, Overpass classifies
 * pointers in the window as device memory, as the CUDA backend does cudaMalloc'd pointers.
 *
 * C and C++ (C programs need _GNU_SOURCE, for memfd_create and MAP_FIXED_NOREPLACE): the MPI
 * test programs include it. */
#ifndef OVERPASS_GPU_SIM_DEVICE_H
#define OVERPASS_GPU_SIM_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define OVERPASS_SIM_DEVICE_BASE \
  ((uintptr_t)0x200000000000ull) /* 32 TiB: clear of heap, libraries, sanitizers */
#define OVERPASS_SIM_DEVICE_BYTES ((uintptr_t)0x010000000000ull) /* 1 TiB window */
#define OVERPASS_SIM_ALIAS_OFFSET OVERPASS_SIM_DEVICE_BYTES      /* alias window follows */

static inline int overpass_sim_is_device(const void* p) {
  const uintptr_t a = (uintptr_t)p;
  return a >= OVERPASS_SIM_DEVICE_BASE && a < OVERPASS_SIM_DEVICE_BASE + OVERPASS_SIM_DEVICE_BYTES;
}

/* The host-accessible alias of simulated device memory. */
static inline void* overpass_sim_alias(const void* device) {
  return (void*)((uintptr_t)device + OVERPASS_SIM_ALIAS_OFFSET);
}

/* Allocates `bytes` of simulated device memory (null on failure); allocations are never reused
 * within a process. Not thread-safe. Each file that includes this header has its own cursor, so
 * a place already taken (by another file's allocations) is skipped. */
static inline void* overpass_sim_device_alloc(size_t bytes) {
  static uintptr_t next = 0;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t size = bytes == 0 ? page : (bytes + page - 1) / page * page;
  for (; next + size + page <= OVERPASS_SIM_DEVICE_BYTES; next += size + page) {
    void* want = (void*)(OVERPASS_SIM_DEVICE_BASE + next);
    void* device =
        mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (device == MAP_FAILED || device != want) {
      if (device != MAP_FAILED) munmap(device, size);
      continue; /* taken: try further on */
    }
    /* The place is ours; now map the shared pages there and at the alias. */
    int fd = memfd_create("overpass-sim-device", 0);
    void* alias = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)size) == 0 &&
        mmap(want, size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) == want)
      alias = mmap((char*)want + OVERPASS_SIM_ALIAS_OFFSET, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (fd >= 0) close(fd);
    if (alias != (char*)want + OVERPASS_SIM_ALIAS_OFFSET) {
      munmap(want, size);
      if (alias != MAP_FAILED) munmap(alias, size);
      return NULL;
    }
    next += size + page; /* a guard page between allocations */
    return want;
  }
  return NULL;
}

#endif
