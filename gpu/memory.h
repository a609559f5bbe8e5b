// Where a buffer lives, and the operations Overpass needs on memory it must not touch directly.
//
// A DeviceMemory backend recognises the device memory of one accelerator API and copies between
// it and the host. Memory that no backend claims (and memory the host may touch, such as managed
// or registered host memory) is plain host memory, read and written directly. The host path is
// therefore always there; a backend is active only once the application has initialised its
// driver (a machine without GPU or driver never sees one) or, for tests, when the simulated
// device is enabled (gpu/sim_device.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string_view>

#include "common/datatype.h"
#include "common/slot_pool.h"
#include "common/status.h"

namespace overpass {

enum class MemoryKind : std::uint8_t {
  kHost,     // pageable or pinned host memory, or memory no backend knows
  kManaged,  // unified memory: the host may touch it (the driver migrates pages)
  kDevice,   // device memory: only the backend's copies may touch it
};

struct PointerInfo {
  MemoryKind kind = MemoryKind::kHost;
  int device = -1;             // device ordinal, for device and managed memory
  std::uint64_t bufferId = 0;  // the driver's id of the allocation: never reused for another
  bool ipcExportable = false;  // plain device allocations; pool and managed ones are not
  bool hostAccessible() const { return kind != MemoryKind::kDevice; }
};

// A device buffer made visible to the other processes of its node (CUDA IPC): whatever a peer
// needs to map it, as plain bytes that travel through the node's shared memory.
struct IpcHandle {
  std::int64_t pid = 0;            // the exporting process
  std::uint64_t key = 0;           // its allocation: never reused for another in that process
  std::uint64_t offset = 0;        // of the buffer within what the handle maps
  std::uint64_t span = 0;          // bytes the handle maps
  unsigned char backend[64] = {};  // the backend's own handle
};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::string_view name() const = 0;
  virtual PointerInfo classify(const void* p) = 0;

  // Copies between device and host memory run on two lanes, each in order, beside each other:
  // towards the host (kUp) and towards the device (kDown). A copy waits for nothing else on the
  // device (the application's streams run on); wait(ticket) returns once the ticket's copy, and so
  // every copy started before it on its lane, is done.
  enum Lane : int { kUp = 0, kDown = 1 };
  struct Ticket {
    int lane = -1;  // -1: nothing to wait for
    std::uint64_t seq = 0;
  };
  virtual Status startCopy(Lane lane, void* dst, const void* src, std::size_t bytes,
                           Ticket* ticket) = 0;
  virtual Status wait(const Ticket& ticket) = 0;

  // Reductions on the device: out[i] = a[i] op b[i] for `count` elements of `type`, all three in
  // device memory (`a` the running result of a rank-order combination), queued on `lane` behind
  // the copies started there; `out` may be `a`, `b`, or disjoint from both. canReduce says which
  // (type, op) have a device kernel; the others stay on the host.
  virtual bool canReduce(DataType, ReduceOp) const { return false; }
  virtual Status startReduce(Lane, const void*, const void*, void*, std::size_t, DataType, ReduceOp,
                             Ticket*) {
    return Status::kInvalidArgument;
  }

  // Inter-process access to device memory: exportIpc describes the device buffer [p, p + bytes)
  // for the other processes of the node (false: it cannot be exported); openIpc maps a peer's
  // buffer into this process and returns its address here (null on failure). Mappings are cached
  // per exported allocation, so a buffer used call after call is mapped once.
  virtual bool exportIpc(const void*, std::size_t, IpcHandle*) { return false; }
  virtual void* openIpc(const IpcHandle&) { return nullptr; }

  // The calling thread's current device context (CUDA's), which the copies and reductions use;
  // setContext makes `context` current on the calling thread and returns the one it replaces. A
  // nonblocking collective on device buffers may be resumed on another thread than the one that
  // posted it (the progress thread, or one that completes it): it takes its context along. Null
  // (and nothing to do) where the backend has no such thing.
  virtual void* context() { return nullptr; }
  virtual void* setContext(void*) { return nullptr; }

  // Device memory for the backend's own scratch (null where it has none).
  virtual void* allocateDevice(std::size_t) { return nullptr; }
  virtual void freeDevice(void*) {}

  // Host memory for staging: page-locked where the backend can (copies to and from it run
  // asynchronously and at full speed), plain otherwise. Null on failure.
  virtual void* allocateHost(std::size_t bytes) { return ::operator new(bytes, std::nothrow); }
  virtual void freeHost(void* p) { ::operator delete(p); }

  Status toHost(void* host, const void* device, std::size_t bytes) {
    Ticket t;
    const Status s = startCopy(kUp, host, device, bytes, &t);
    return s == Status::kOk ? wait(t) : s;
  }
  Status fromHost(void* device, const void* host, std::size_t bytes) {
    Ticket t;
    const Status s = startCopy(kDown, device, host, bytes, &t);
    return s == Status::kOk ? wait(t) : s;
  }
};

// Whether `p` is memory only the device can touch (null: no).
inline bool onDevice(DeviceMemory& memory, const void* p) {
  return p && !memory.classify(p).hostAccessible();
}

// Memory of a backend, grown on demand and kept (per communicator; common/slot_pool.h): slots
// allocated through the backend active when a slot grows, and freed through the same one.
// HostStaging holds host copies of device buffers, DeviceScratch the device memory of the device
// algorithms; their users number the slots.
template <void* (DeviceMemory::*Allocate)(std::size_t), void (DeviceMemory::*Free)(void*)>
struct BackendMemory {
  using Owner = DeviceMemory;
  static void* allocate(DeviceMemory* memory, std::size_t bytes) {
    return (memory->*Allocate)(bytes);
  }
  static void release(DeviceMemory* memory, void* data) { (memory->*Free)(data); }
};
template <void* (DeviceMemory::*Allocate)(std::size_t), void (DeviceMemory::*Free)(void*)>
class BackendSlots {
 public:
  static constexpr int kSlots = 4;
  // Null when the memory cannot be had.
  void* get(int slot, std::size_t bytes, DeviceMemory& memory) {
    return pool_.get(static_cast<std::size_t>(slot), bytes, &memory);
  }

 private:
  SlotPool<BackendMemory<Allocate, Free>, kSlots> pool_;
};
using HostStaging = BackendSlots<&DeviceMemory::allocateHost, &DeviceMemory::freeHost>;
using DeviceScratch = BackendSlots<&DeviceMemory::allocateDevice, &DeviceMemory::freeDevice>;

// The (type, op) pairs with a device reduction kernel (gpu/device_reduce_kernels.cu): every
// predefined operation on every type the device has arithmetic for (not long double).
bool deviceReducible(DataType type, ReduceOp op);

// The backend of a process without device memory: everything is host memory, copies are
// memcpy and done when started (so code written against DeviceMemory runs unchanged).
DeviceMemory& hostMemory();

// Whether device buffers can occur in this process at all: a driver was found at initialisation,
// or the simulated device is on. A fact of the machine, not of the application's progress.
bool deviceMemoryPossible();

// At initialisation: with `simulated`, the simulated device of gpu/sim_device.h takes the place of
// any real backend (tests); otherwise the CUDA driver is looked for (built with the CUDA toolkit):
// loaded if the machine has one, not initialised (the application does that, Overpass follows).
void initDeviceMemory(bool simulated);

namespace device_detail {
// deviceMemoryPossible(), set by initDeviceMemory: read at every intercepted call.
extern std::atomic<bool> gPossible;
DeviceMemory* currentBackend();
}  // namespace device_detail

// The backend that owns device memory in this process now, or null: every buffer is host memory.
// Without a driver, one load per call; with one, until the application initialises CUDA, one
// driver query per call.
inline DeviceMemory* deviceMemory() {
  return device_detail::gPossible.load(std::memory_order_relaxed) ? device_detail::currentBackend()
                                                                  : nullptr;
}

}  // namespace overpass
