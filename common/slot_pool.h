// SlotPool: a fixed set of buffers, each grown on demand and kept from call to call (per-call
// allocation of large buffers costs page faults on every call). The one class behind the
// algorithms' scratch memory (coll/team.h, Scratch) and the device layer's host staging and
// device scratch (gpu/memory.h, BackendSlots); each of those names its own slots.
//
// `Memory` says where a buffer comes from:
//   using Owner = ...;                                   what allocates (void: nothing to name)
//   static void* allocate(Owner* owner, std::size_t);    null when the memory cannot be had
//   static void release(Owner* owner, void* data);
// A buffer is released through the owner that allocated it, whichever owner asks next.
#pragma once

#include <cstddef>

namespace overpass {

template <class Memory, std::size_t N>
class SlotPool {
 public:
  using Owner = typename Memory::Owner;
  static constexpr std::size_t kSlots = N;

  SlotPool() = default;
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;
  ~SlotPool() {
    for (Slot& s : slots_)
      if (s.data) Memory::release(s.owner, s.data);
  }

  // At least `bytes` bytes, the slot's previous contents not kept when it grows (released
  // before the larger buffer is allocated, so that the two never coexist). Null when the memory
  // cannot be had (the slot is then empty).
  void* get(std::size_t slot, std::size_t bytes, Owner* owner = nullptr) {
    Slot& s = slots_[slot];
    if (s.data && s.size >= bytes) return s.data;
    if (s.data) Memory::release(s.owner, s.data);
    s = {nullptr, 0, owner};
    s.data = Memory::allocate(owner, bytes);
    if (s.data) s.size = bytes;
    return s.data;
  }

 private:
  struct Slot {
    void* data = nullptr;
    std::size_t size = 0;
    Owner* owner = nullptr;
  };
  Slot slots_[N];
};

// Plain host memory from the heap; an allocation that fails throws std::bad_alloc, as `new` does
// everywhere else.
struct HeapMemory {
  using Owner = void;
  static void* allocate(void*, std::size_t bytes) { return new unsigned char[bytes]; }
  static void release(void*, void* data) { delete[] static_cast<unsigned char*>(data); }
};

}  // namespace overpass
