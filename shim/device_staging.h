// Device buffers handed to an intercepted collective (docs/GPU.md). When a device backend is
// active (gpu/memory.h), each significant buffer of the call that lies in device memory is
// replaced, for the duration of the call, by a host copy of the span its elements occupy: copied
// from the device before the call when the call reads it (or when the datatype has holes that the
// copy back must preserve), and back to the device after the call when the call writes it. The
// path a call takes never depends on memory types, so every rank still takes the same one; only
// this rank's pointers change (DESIGN.md rule 2). Overpass's algorithms and the MPI library
// underneath (not CUDA-aware) then see host memory only.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "gpu/memory.h"

namespace overpass::shim {

class DeviceStaging {
 public:
  DeviceStaging(DeviceMemory& memory, HostStaging& staging) : memory_(memory), staging_(staging) {}

  // `buf` points at the call's pointer to `count` elements of `type`, in device memory (the
  // caller classified it). Returns an MPI error code.
  int add(const void*& buf, std::size_t count, MPI_Datatype type, bool read, bool written);
  int add(void*& buf, std::size_t count, MPI_Datatype type, bool read, bool written) {
    const void* p = buf;
    const int rc = add(p, count, type, read, written);
    buf = const_cast<void*>(p);
    return rc;
  }
  // After the call: the written buffers back to the device. Returns an MPI error code.
  int finish();
  bool any() const { return count_ > 0; }

 private:
  struct Staged {
    void* device;  // start of the span on the device
    char* host;    // its host copy
    std::size_t bytes;
    bool written;
  };
  static constexpr int kMaxBuffers = HostStaging::kSlots;

  DeviceMemory& memory_;
  HostStaging& staging_;
  Staged staged_[kMaxBuffers];
  int count_ = 0;
};

}  // namespace overpass::shim
