// The CUDA backend of gpu/memory.h, through the CUDA driver API: libcuda.so.1 is loaded at
// initialisation if the machine has it (Overpass never links the driver or the runtime), and the
// backend becomes active once the application has initialised CUDA itself (Overpass never
// initialises a driver the application does not use). Built when the CUDA toolkit is found (its
// cuda.h gives the types); on a machine without a driver the backend stays inactive at no cost.
//
// Copies run on two non-blocking streams of Overpass's own per device context (the two lanes of
// gpu/memory.h), completion tracked by events: the application's kernels on its other streams
// keep running. Peers' buffers are mapped through CUDA IPC, once per allocation.
#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "gpu/memory.h"

namespace overpass {

extern const unsigned char kDeviceReduceFatbin[];  // gpu/device_reduce_kernels.cu, embedded

namespace {

// The driver functions used, resolved by their versioned names (cuda.h maps the unversioned
// names onto these).
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*pointerGetAttributes)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  CUresult (*ctxGetCurrent)(CUcontext*);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*streamCreate)(CUstream*, unsigned);
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
  CUresult (*eventCreate)(CUevent*, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*memHostAlloc)(void**, std::size_t, unsigned);
  CUresult (*memFreeHost)(void*);
  CUresult (*moduleLoadData)(CUmodule*, const void*);
  CUresult (*moduleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**);
  CUresult (*memAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memGetAddressRange)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  CUresult (*ipcGetMemHandle)(CUipcMemHandle*, CUdeviceptr);
  CUresult (*ipcOpenMemHandle)(CUdeviceptr*, CUipcMemHandle, unsigned);
  CUresult (*ipcCloseMemHandle)(CUdeviceptr);

  bool load(void* lib) {
    return resolve(lib, "cuInit", init) &&
           resolve(lib, "cuPointerGetAttributes", pointerGetAttributes) &&
           resolve(lib, "cuCtxGetCurrent", ctxGetCurrent) &&
           resolve(lib, "cuCtxSetCurrent", ctxSetCurrent) &&
           resolve(lib, "cuStreamCreate", streamCreate) &&
           resolve(lib, "cuMemcpyAsync", memcpyAsync) &&
           resolve(lib, "cuEventCreate", eventCreate) &&
           resolve(lib, "cuEventRecord", eventRecord) &&
           resolve(lib, "cuEventSynchronize", eventSynchronize) &&
           resolve(lib, "cuMemHostAlloc", memHostAlloc) &&
           resolve(lib, "cuMemFreeHost", memFreeHost) &&
           resolve(lib, "cuModuleLoadData", moduleLoadData) &&
           resolve(lib, "cuModuleGetFunction", moduleGetFunction) &&
           resolve(lib, "cuLaunchKernel", launchKernel) &&
           resolve(lib, "cuMemAlloc_v2", memAlloc) && resolve(lib, "cuMemFree_v2", memFree) &&
           resolve(lib, "cuMemGetAddressRange_v2", memGetAddressRange) &&
           resolve(lib, "cuIpcGetMemHandle", ipcGetMemHandle) &&
           resolve(lib, "cuIpcOpenMemHandle_v2", ipcOpenMemHandle) &&
           resolve(lib, "cuIpcCloseMemHandle", ipcCloseMemHandle);
  }

 private:
  template <class F>
  static bool resolve(void* lib, const char* name, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
  }
};

class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(const Driver& driver) : cu_(driver) {}
  std::string_view name() const override { return "cuda"; }

  void* context() override {
    CUcontext ctx = nullptr;
    return cu_.ctxGetCurrent(&ctx) == CUDA_SUCCESS ? ctx : nullptr;
  }
  void* setContext(void* context) override {
    CUcontext previous = nullptr;
    if (cu_.ctxGetCurrent(&previous) != CUDA_SUCCESS) previous = nullptr;
    if (previous != context) cu_.ctxSetCurrent(static_cast<CUcontext>(context));
    return previous;
  }

  PointerInfo classify(const void* p) override {
    PointerInfo info;
    unsigned type = 0;
    int managed = 0, device = -1;
    unsigned long long id = 0;
    CUmemoryPool pool = nullptr;
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID,
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
    void* data[] = {&type, &managed, &device, &id, &pool};
    // Host memory the driver does not know is reported as success with no type (or an error).
    if (cu_.pointerGetAttributes(5, attrs, data, reinterpret_cast<CUdeviceptr>(p)) !=
            CUDA_SUCCESS ||
        type == 0)
      return info;
    info.device = device;
    info.bufferId = id;
    if (managed)
      info.kind = MemoryKind::kManaged;
    else if (type == CU_MEMORYTYPE_DEVICE)
      info.kind = MemoryKind::kDevice;
    info.ipcExportable = info.kind == MemoryKind::kDevice && pool == nullptr;
    return info;
  }

  Status startCopy(Lane lane, void* dst, const void* src, std::size_t bytes,
                   Ticket* ticket) override {
    Lanes* lanes = lanesOfThisThread();
    if (!lanes) return Status::kInternal;
    CUevent event = nullptr;
    if (!lanes->freeEvents.empty()) {
      event = lanes->freeEvents.back();
      lanes->freeEvents.pop_back();
    } else if (cu_.eventCreate(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      OVERPASS_ERROR("CUDA: cannot create an event");
      return Status::kInternal;
    }
    const CUresult rc =
        cu_.memcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                        bytes, lanes->stream[lane]);
    if (rc != CUDA_SUCCESS || cu_.eventRecord(event, lanes->stream[lane]) != CUDA_SUCCESS) {
      lanes->freeEvents.push_back(event);
      OVERPASS_ERROR("CUDA: copy of %zu bytes failed (error %d)", bytes, static_cast<int>(rc));
      return Status::kInternal;
    }
    *ticket = {lane, ++lanes->issued[lane]};
    lanes->pending[lane].push_back({ticket->seq, event});
    return Status::kOk;
  }

  // CUDA IPC: the handle of the whole allocation (keyed by the driver's buffer id, which a later
  // allocation at the same address does not share) and the buffer's offset in it.
  // Exported allocations are remembered by buffer id (up to kMaxOpened, the least recently used
  // forgotten first): a buffer passed call after call costs one attribute query.
  bool exportIpc(const void* p, std::size_t bytes, IpcHandle* handle) override {
    const PointerInfo info = classify(p);
    if (info.kind != MemoryKind::kDevice || !info.ipcExportable) return false;
    const auto at = reinterpret_cast<CUdeviceptr>(p);
    std::lock_guard lock(mutex_);
    auto it = exported_.find(info.bufferId);
    if (it == exported_.end()) {
      Exported e{};
      static_assert(sizeof e.ipc <= sizeof handle->backend);
      if (cu_.memGetAddressRange(&e.base, &e.size, at) != CUDA_SUCCESS ||
          cu_.ipcGetMemHandle(&e.ipc, e.base) != CUDA_SUCCESS)
        return false;
      if (exported_.size() >= kMaxOpened) exported_.erase(leastRecent(exported_));
      it = exported_.emplace(info.bufferId, e).first;
    }
    Exported& e = it->second;
    e.used = ++uses_;
    if (at < e.base || at - e.base + bytes > e.size) return false;
    *handle = {};
    handle->pid = getpid();
    handle->key = info.bufferId;
    handle->offset = at - e.base;
    handle->span = e.size;
    std::memcpy(handle->backend, &e.ipc, sizeof e.ipc);
    return true;
  }
  // Opened allocations stay mapped (a peer's buffer used call after call is opened once), up to
  // kMaxOpened; beyond, the least recently used is closed.
  void* openIpc(const IpcHandle& handle) override {
    std::lock_guard lock(mutex_);
    const std::pair key{handle.pid, handle.key};
    if (auto it = opened_.find(key); it != opened_.end()) {
      it->second.used = ++uses_;
      return reinterpret_cast<unsigned char*>(it->second.base) + handle.offset;
    }
    CUipcMemHandle ipc;
    std::memcpy(&ipc, handle.backend, sizeof ipc);
    CUdeviceptr base = 0;
    if (const CUresult rc = cu_.ipcOpenMemHandle(&base, ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        rc != CUDA_SUCCESS) {
      OVERPASS_WARN("CUDA: cannot open the IPC handle of process %lld (error %d)",
                    static_cast<long long>(handle.pid), static_cast<int>(rc));
      return nullptr;
    }
    if (opened_.size() >= kMaxOpened) {
      const auto oldest = leastRecent(opened_);
      cu_.ipcCloseMemHandle(oldest->second.base);
      opened_.erase(oldest);
    }
    opened_.emplace(key, Opened{base, ++uses_});
    return reinterpret_cast<unsigned char*>(base) + handle.offset;
  }

  void* allocateDevice(std::size_t bytes) override {
    CUdeviceptr p = 0;
    return cu_.memAlloc(&p, bytes ? bytes : 1) == CUDA_SUCCESS ? reinterpret_cast<void*>(p)
                                                               : nullptr;
  }
  void freeDevice(void* p) override { cu_.memFree(reinterpret_cast<CUdeviceptr>(p)); }

  void* allocateHost(std::size_t bytes) override {
    void* p = nullptr;
    if (cu_.memHostAlloc(&p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS) return p;
    return DeviceMemory::allocateHost(bytes);  // no context yet, or out of pinned memory
  }
  void freeHost(void* p) override {
    if (cu_.memFreeHost(p) != CUDA_SUCCESS) DeviceMemory::freeHost(p);
  }

  bool canReduce(DataType type, ReduceOp op) const override { return deviceReducible(type, op); }

  Status startReduce(Lane lane, const void* a, const void* b, void* out, std::size_t count,
                     DataType type, ReduceOp op, Ticket* ticket) override {
    if (!canReduce(type, op)) return Status::kInvalidArgument;
    Lanes* lanes = lanesOfThisThread();
    if (!lanes) return Status::kInternal;
    CUfunction fn = kernel(*lanes, type, op);
    if (!fn) return Status::kInternal;
    constexpr unsigned kThreads = 256, kMaxBlocks = 4096;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(
        kMaxBlocks, std::max<std::size_t>(1, (count + kThreads - 1) / kThreads)));
    auto pa = reinterpret_cast<CUdeviceptr>(a), pb = reinterpret_cast<CUdeviceptr>(b),
         pout = reinterpret_cast<CUdeviceptr>(out);
    unsigned long long n = count;
    void* params[] = {&pa, &pb, &pout, &n};
    if (count && cu_.launchKernel(fn, blocks, 1, 1, kThreads, 1, 1, 0, lanes->stream[lane], params,
                                  nullptr) != CUDA_SUCCESS) {
      OVERPASS_ERROR("CUDA: reduction kernel %s/%s failed to launch", dataTypeName(type).data(),
                     reduceOpName(op).data());
      return Status::kInternal;
    }
    return record(*lanes, lane, ticket);
  }

  Status wait(const Ticket& ticket) override {
    if (ticket.lane < 0) return Status::kOk;
    Lanes* lanes = lanesOfThisThread();
    if (!lanes) return Status::kInternal;
    auto& pending = lanes->pending[ticket.lane];
    while (!pending.empty() && pending.front().first <= ticket.seq) {
      const CUevent event = pending.front().second;
      pending.pop_front();
      lanes->freeEvents.push_back(event);
      if (cu_.eventSynchronize(event) != CUDA_SUCCESS) {
        OVERPASS_ERROR("CUDA: a copy failed");
        return Status::kInternal;
      }
    }
    return Status::kOk;
  }

 private:
  // The two lanes of one context: non-blocking streams of Overpass's own, the copies issued on
  // each and their completion events (recycled).
  struct Lanes {
    CUstream stream[2] = {};
    std::uint64_t issued[2] = {};
    std::deque<std::pair<std::uint64_t, CUevent>> pending[2];
    std::vector<CUevent> freeEvents;
    CUmodule module = nullptr;  // the reduction kernels, loaded on first use
    std::map<int, CUfunction> kernels;
  };

  // A ticket for everything queued on the lane so far: an event recorded behind it.
  Status record(Lanes& lanes, Lane lane, Ticket* ticket) {
    CUevent event = nullptr;
    if (!lanes.freeEvents.empty()) {
      event = lanes.freeEvents.back();
      lanes.freeEvents.pop_back();
    } else if (cu_.eventCreate(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      OVERPASS_ERROR("CUDA: cannot create an event");
      return Status::kInternal;
    }
    if (cu_.eventRecord(event, lanes.stream[lane]) != CUDA_SUCCESS) {
      lanes.freeEvents.push_back(event);
      OVERPASS_ERROR("CUDA: cannot record an event");
      return Status::kInternal;
    }
    *ticket = {lane, ++lanes.issued[lane]};
    lanes.pending[lane].push_back({ticket->seq, event});
    return Status::kOk;
  }

  // The kernel for (type, op) in the context's module, loaded from the embedded fatbin on first
  // use.
  CUfunction kernel(Lanes& lanes, DataType type, ReduceOp op) {
    const int key =
        static_cast<int>(type) * static_cast<int>(ReduceOp::kCount) + static_cast<int>(op);
    if (auto it = lanes.kernels.find(key); it != lanes.kernels.end()) return it->second;
    if (!lanes.module && cu_.moduleLoadData(&lanes.module, kDeviceReduceFatbin) != CUDA_SUCCESS) {
      OVERPASS_ERROR("CUDA: cannot load the reduction kernels (no code for this GPU?)");
      return nullptr;
    }
    const std::string name =
        "overpass_reduce_" + std::string(dataTypeName(type)) + "_" + std::string(reduceOpName(op));
    CUfunction fn = nullptr;
    if (cu_.moduleGetFunction(&fn, lanes.module, name.c_str()) != CUDA_SUCCESS) {
      OVERPASS_ERROR("CUDA: no kernel %s", name.c_str());
      return nullptr;
    }
    lanes.kernels.emplace(key, fn);
    return fn;
  }

  // The lanes of the calling thread's current context (the one the application made current, as
  // CUDA-aware MPI libraries expect).
  Lanes* lanesOfThisThread() {
    CUcontext ctx = nullptr;
    if (cu_.ctxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
      OVERPASS_ERROR("CUDA: no current context on the calling thread (call cudaSetDevice first)");
      return nullptr;
    }
    std::lock_guard lock(mutex_);
    auto it = lanes_.find(ctx);
    if (it != lanes_.end()) return &it->second;
    Lanes lanes;
    for (CUstream& stream : lanes.stream)
      if (cu_.streamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        OVERPASS_ERROR("CUDA: cannot create a stream");
        return nullptr;
      }
    return &lanes_.emplace(ctx, std::move(lanes)).first->second;
  }

  static constexpr std::size_t kMaxOpened = 64;
  struct Opened {
    CUdeviceptr base;
    std::uint64_t used;
  };
  struct Exported {
    CUdeviceptr base;
    std::size_t size;
    CUipcMemHandle ipc;
    std::uint64_t used;
  };
  template <class Map>
  static typename Map::iterator leastRecent(Map& map) {
    auto oldest = map.begin();
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->second.used < oldest->second.used) oldest = it;
    return oldest;
  }

  const Driver& cu_;
  std::mutex mutex_;
  std::map<CUcontext, Lanes> lanes_;
  std::map<std::pair<std::int64_t, std::uint64_t>, Opened> opened_;  // peers' allocations
  std::map<std::uint64_t, Exported> exported_;                       // own, by buffer id
  std::uint64_t uses_ = 0;
};

enum DriverState : int { kNoDriver, kLoaded, kActive };
std::atomic<int> gState{kNoDriver};
Driver gDriver;

}  // namespace

void loadCudaDriver() {
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      OVERPASS_DEBUG("CUDA: no driver on this machine (%s): every buffer is host memory",
                     dlerror());
      return;
    }
    if (!gDriver.load(lib)) {
      OVERPASS_WARN(
          "CUDA: the driver lacks functions Overpass needs; device buffers will not be "
          "recognised");
      return;
    }
    gState.store(kLoaded, std::memory_order_release);
  });
}

bool cudaDriverLoaded() {
  return gState.load(std::memory_order_acquire) != kNoDriver;
}

DeviceMemory* cudaDeviceMemory() {
  static CudaMemory memory(gDriver);
  const int state = gState.load(std::memory_order_acquire);
  if (state == kActive) return &memory;
  if (state == kNoDriver) return nullptr;
  // A device buffer can only exist once the application has initialised the driver; until then
  // the driver answers "not initialised" and nothing is a device buffer.
  CUcontext ctx = nullptr;
  if (gDriver.ctxGetCurrent(&ctx) == CUDA_ERROR_NOT_INITIALIZED) return nullptr;
  if (gDriver.init(0) != CUDA_SUCCESS) return nullptr;
  if (gState.exchange(kActive) != kActive)
    OVERPASS_INFO(
        "CUDA: initialised by the application; device buffers are staged through host "
        "memory");
  return &memory;
}

}  // namespace overpass
