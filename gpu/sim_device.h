/* The simulated device: a stand-in for GPU memory on machines without a GPU, for tests only.
 *
 * Device memory is a window of the address space that the host cannot touch: pages there are
 * mapped without access rights, so any direct read or write (by Overpass or by the MPI library
 * underneath) crashes the program. Each allocation is also mapped read-write at the same offset in
 * an alias window; only the simulated backend's copies and reductions (gpu/sim_memory.cc) and the
 * test program (to fill and check buffers) use the alias. With OVERPASS_SIM_DEVICE=1, Overpass
 * classifies pointers in the window as device memory, as the CUDA backend does cudaMalloc'd
 * pointers.
 *
 * The pages behind a process's window are one memory file (memfd), sparse, at the window's
 * offsets; its descriptor and the process id are in a header page at the start of the alias
 * window. Simulated IPC (the stand-in for CUDA IPC) maps part of a peer's file into a free place
 * of this process's window, opened through /proc/<pid>/fd/<fd>.
 *
 * C and C++ (C programs need _GNU_SOURCE, for memfd_create and MAP_FIXED_NOREPLACE): the MPI
 * test programs include it. */
#ifndef OVERPASS_GPU_SIM_DEVICE_H
#define OVERPASS_GPU_SIM_DEVICE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define OVERPASS_SIM_DEVICE_BASE \
  ((uintptr_t)0x200000000000ull) /* 32 TiB: clear of heap, libraries, sanitizers */
#define OVERPASS_SIM_DEVICE_BYTES ((uintptr_t)0x010000000000ull) /* 1 TiB window */
#define OVERPASS_SIM_ALIAS_OFFSET OVERPASS_SIM_DEVICE_BYTES      /* alias window follows */
#define OVERPASS_SIM_MAGIC 0x4f76657270617373ull

static inline int overpass_sim_is_device(const void* p) {
  const uintptr_t a = (uintptr_t)p;
  return a >= OVERPASS_SIM_DEVICE_BASE && a < OVERPASS_SIM_DEVICE_BASE + OVERPASS_SIM_DEVICE_BYTES;
}

/* The host-accessible alias of simulated device memory. */
static inline void* overpass_sim_alias(const void* device) {
  return (void*)((uintptr_t)device + OVERPASS_SIM_ALIAS_OFFSET);
}

struct overpass_sim_header {
  uint64_t magic;
  int64_t pid; /* the process whose file this is */
  int32_t fd;  /* its memory file */
};

/* This process's header, created with the memory file on first use (null on failure). The
 * header's page is the alias of the window's first page, which therefore never holds memory. */
static inline struct overpass_sim_header* overpass_sim_this_process(void) {
  void* at = (void*)(OVERPASS_SIM_DEVICE_BASE + OVERPASS_SIM_ALIAS_OFFSET);
  struct overpass_sim_header* h = (struct overpass_sim_header*)at;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  void* p = mmap(at, page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) /* mapped already: by this header's first use, or nothing to trust */
    return errno == EEXIST && h->magic == OVERPASS_SIM_MAGIC ? h : NULL;
  if (p != at) {
    munmap(p, page);
    return NULL;
  }
  const int fd = memfd_create("overpass-sim-device", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)OVERPASS_SIM_DEVICE_BYTES) != 0) {
    if (fd >= 0) close(fd);
    munmap(at, page);
    return NULL;
  }
  h->pid = (int64_t)getpid();
  h->fd = fd;
  h->magic = OVERPASS_SIM_MAGIC;
  return h;
}

/* Maps `size` bytes of memory file `fd` from `offset` (-1: the offset of the place itself) into a
 * free place of the window (no access) and at its alias (read-write): the place, or null. Places
 * are never reused within a process; each file that includes this header has its own cursor, so a
 * place already taken (by another file's mappings) is skipped. Not thread-safe. */
static inline void* overpass_sim_device_map(int fd, off_t offset, size_t size) {
  static uintptr_t next = 0;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size = size == 0 ? page : (size + page - 1) / page * page;
  if (next == 0) next = page; /* the first page is the header's */
  for (; next + size + page <= OVERPASS_SIM_DEVICE_BYTES; next += size + page) {
    void* want = (void*)(OVERPASS_SIM_DEVICE_BASE + next);
    void* device =
        mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (device == MAP_FAILED || device != want) {
      if (device != MAP_FAILED) munmap(device, size);
      continue; /* taken: try further on */
    }
    /* The place is ours; now map the file there and at the alias. */
    const off_t from = offset < 0 ? (off_t)next : offset;
    void* alias = MAP_FAILED;
    if (mmap(want, size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, from) == want)
      alias = mmap((char*)want + OVERPASS_SIM_ALIAS_OFFSET, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, from);
    if (alias != (char*)want + OVERPASS_SIM_ALIAS_OFFSET) {
      munmap(want, size);
      if (alias != MAP_FAILED) munmap(alias, size);
      return NULL;
    }
    next += size + page; /* a guard page between places */
    return want;
  }
  return NULL;
}

/* Allocates `bytes` of simulated device memory (null on failure): this process's memory file at
 * the place's own offset. */
static inline void* overpass_sim_device_alloc(size_t bytes) {
  const struct overpass_sim_header* h = overpass_sim_this_process();
  return h ? overpass_sim_device_map(h->fd, -1, bytes) : NULL;
}

#endif
