// The CUDA backend of gpu/memory.h, through the CUDA driver API: libcuda.so.1 is loaded at
// initialisation if the machine has it (Overpass never links the driver or the runtime), and the
// backend becomes active once the application has initialised CUDA itself (Overpass never
// initialises a driver the application does not use). Built when the CUDA toolkit is found (its
// cuda.h gives the types); on a machine without a driver the backend stays inactive at no cost.
//
// Copies run on a non-blocking stream of Overpass's own, one per device context, and wait only
// for that stream: the application's kernels on its other streams keep running.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <map>
#include <mutex>

#include "common/log.h"
#include "gpu/memory.h"

namespace overpass {
namespace {

// The driver functions used, resolved by their versioned names (cuda.h maps the unversioned
// names onto these).
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*pointerGetAttributes)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  CUresult (*ctxGetCurrent)(CUcontext*);
  CUresult (*ctxPushCurrent)(CUcontext);
  CUresult (*ctxPopCurrent)(CUcontext*);
  CUresult (*streamCreate)(CUstream*, unsigned);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);

  bool load(void* lib) {
    return resolve(lib, "cuInit", init) &&
           resolve(lib, "cuPointerGetAttributes", pointerGetAttributes) &&
           resolve(lib, "cuCtxGetCurrent", ctxGetCurrent) &&
           resolve(lib, "cuCtxPushCurrent_v2", ctxPushCurrent) &&
           resolve(lib, "cuCtxPopCurrent_v2", ctxPopCurrent) &&
           resolve(lib, "cuStreamCreate", streamCreate) &&
           resolve(lib, "cuStreamSynchronize", streamSynchronize) &&
           resolve(lib, "cuMemcpyAsync", memcpyAsync);
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

  Status toHost(void* host, const void* device, std::size_t bytes) override {
    return copy(reinterpret_cast<CUdeviceptr>(host), reinterpret_cast<CUdeviceptr>(device), bytes);
  }
  Status fromHost(void* device, const void* host, std::size_t bytes) override {
    return copy(reinterpret_cast<CUdeviceptr>(device), reinterpret_cast<CUdeviceptr>(host), bytes);
  }

 private:
  // One copy on Overpass's stream of the calling thread's context (the one the application made
  // current, as CUDA-aware MPI libraries expect), waiting for that stream only.
  Status copy(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) {
    if (bytes == 0) return Status::kOk;
    CUcontext ctx = nullptr;
    if (cu_.ctxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
      OVERPASS_ERROR("CUDA: no current context on the calling thread (call cudaSetDevice first)");
      return Status::kInternal;
    }
    CUstream stream = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto it = streams_.find(ctx);
      if (it == streams_.end()) {
        if (cu_.streamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
          OVERPASS_ERROR("CUDA: cannot create a stream");
          return Status::kInternal;
        }
        it = streams_.emplace(ctx, stream).first;
      }
      stream = it->second;
    }
    const CUresult rc = cu_.memcpyAsync(dst, src, bytes, stream);
    if (rc != CUDA_SUCCESS || cu_.streamSynchronize(stream) != CUDA_SUCCESS) {
      OVERPASS_ERROR("CUDA: copy of %zu bytes failed (error %d)", bytes, static_cast<int>(rc));
      return Status::kInternal;
    }
    return Status::kOk;
  }

  const Driver& cu_;
  std::mutex mutex_;
  std::map<CUcontext, CUstream> streams_;
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
