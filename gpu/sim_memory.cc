#include "gpu/sim_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "common/log.h"
#include "gpu/sim_device.h"
#include "gpu/sim_test_hooks.h"
#include "kernels/reduce_kernels.h"

namespace overpass {
namespace {

using Clock = std::chrono::steady_clock;

// One lane: a worker thread running queued copies (and reductions) in order.
class CopyLane {
 public:
  CopyLane(int id, std::mutex& traceMutex, std::vector<SimCopyRecord>& trace,
           std::chrono::microseconds& delay, bool& tracing)
      : id_(id), traceMutex_(traceMutex), trace_(trace), delay_(delay), tracing_(tracing) {}
  ~CopyLane() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  std::uint64_t start(void* dst, std::size_t bytes, std::function<void()> work) {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
    queue_.push_back({std::move(work), dst, bytes, ++issued_});
    wake_.notify_all();
    return issued_;
  }
  void wait(std::uint64_t seq) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return completed_ >= seq; });
  }

 private:
  struct Job {
    std::function<void()> work;
    void* dst;
    std::size_t bytes;
    std::uint64_t seq;
  };

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      const Job job = queue_.front();
      lock.unlock();
      SimCopyRecord record{id_, job.seq, job.dst, job.bytes, Clock::now(), {}};
      job.work();
      std::chrono::microseconds delay;
      {
        std::lock_guard traceLock(traceMutex_);
        delay = delay_;
      }
      if (delay.count()) std::this_thread::sleep_until(record.start + delay);
      record.end = Clock::now();
      {
        std::lock_guard traceLock(traceMutex_);
        if (tracing_) trace_.push_back(record);
      }
      lock.lock();
      queue_.pop_front();
      completed_ = job.seq;
      done_.notify_all();
    }
  }

  const int id_;
  std::mutex& traceMutex_;
  std::vector<SimCopyRecord>& trace_;
  std::chrono::microseconds& delay_;
  bool& tracing_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Job> queue_;
  std::uint64_t issued_ = 0, completed_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

class SimulatedDeviceMemory final : public DeviceMemory {
 public:
  ~SimulatedDeviceMemory() override {
    for (const auto& [key, mapping] : opened_) unmap(mapping.place, mapping.span);
  }
  std::string_view name() const override { return "simulated device"; }
  PointerInfo classify(const void* p) override {
    PointerInfo info;
    if (!overpass_sim_is_device(p)) return info;
    info.kind = MemoryKind::kDevice;
    info.device = 0;
    info.ipcExportable = true;
    return info;
  }
  // The lane copies through the alias of whichever side is device memory.
  Status startCopy(Lane lane, void* dst, const void* src, std::size_t bytes,
                   Ticket* ticket) override {
    void* to = host(dst);
    const void* from = host(src);
    *ticket = {lane, lanes_[lane].start(dst, bytes, [=] { std::memcpy(to, from, bytes); })};
    return Status::kOk;
  }
  bool canReduce(DataType type, ReduceOp op) const override { return deviceReducible(type, op); }
  // The host kernels on the lane; the result goes through a temporary where it overwrites the
  // running operand `a` (which the host kernels' `in` must not overlap).
  Status startReduce(Lane lane, const void* a, const void* b, void* out, std::size_t count,
                     DataType type, ReduceOp op, Ticket* ticket) override {
    if (!canReduce(type, op)) return Status::kInvalidArgument;
    const void* x = host(a);
    const void* y = host(b);
    void* z = host(out);
    const std::size_t bytes = count * dataTypeSize(type);
    *ticket = {lane, lanes_[lane].start(out, bytes, [=] {
                 if (z != x || x == y) return reduceInto(x, y, z, count, type, op);
                 std::vector<unsigned char> temp(bytes);
                 reduceInto(x, y, temp.data(), count, type, op);
                 std::memcpy(z, temp.data(), bytes);
               })};
    return Status::kOk;
  }
  Status wait(const Ticket& ticket) override {
    if (ticket.lane >= 0) lanes_[ticket.lane].wait(ticket.seq);
    return Status::kOk;
  }

  // Simulated IPC: the handle names the pages of the buffer in this process's memory file (the
  // window offset of its own allocations); a peer maps them into its own window.
  bool exportIpc(const void* p, std::size_t bytes, IpcHandle* handle) override {
    const overpass_sim_header* header = overpass_sim_this_process();
    if (!header || !overpass_sim_is_device(p) || openedAt(p)) return false;  // not its own memory
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(p) - OVERPASS_SIM_DEVICE_BASE;
    const std::uintptr_t first = offset / page * page;
    *handle = {};
    handle->pid = header->pid;
    handle->key = first;
    handle->offset = offset - first;
    handle->span = (offset + bytes + page - 1) / page * page - first;
    std::memcpy(handle->backend, &header->fd, sizeof header->fd);
    return true;
  }
  void* openIpc(const IpcHandle& handle) override {
    std::lock_guard lock(openMutex_);
    const Key key{handle.pid, handle.key, handle.span};
    if (auto it = opened_.find(key); it != opened_.end()) {
      it->second.used = ++uses_;
      return static_cast<unsigned char*>(it->second.place) + handle.offset;
    }
    int fd = -1;
    std::memcpy(&fd, handle.backend, sizeof fd);
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%lld/fd/%d", static_cast<long long>(handle.pid), fd);
    const int file = open(path, O_RDWR | O_CLOEXEC);
    if (file < 0) {
      OVERPASS_WARN("simulated IPC: cannot open %s: %s", path, std::strerror(errno));
      return nullptr;
    }
    void* place = overpass_sim_device_map(file, static_cast<off_t>(handle.key), handle.span);
    close(file);
    if (!place) return nullptr;
    if (opened_.size() >= kMaxOpened) evictLeastRecent();
    opened_.emplace(key, Mapping{place, handle.span, ++uses_});
    return static_cast<unsigned char*>(place) + handle.offset;
  }

  void* allocateDevice(std::size_t bytes) override {
    std::lock_guard lock(openMutex_);
    void* p = overpass_sim_device_alloc(bytes);
    if (p) allocated_[p] = bytes;
    return p;
  }
  // The place is never reused; its pages go back to the system.
  void freeDevice(void* p) override {
    std::lock_guard lock(openMutex_);
    const auto it = allocated_.find(p);
    const overpass_sim_header* header = overpass_sim_this_process();
    if (it == allocated_.end() || !header) return;
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t span = (std::max<std::size_t>(it->second, 1) + page - 1) / page * page;
    unmap(p, span);
    fallocate(header->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
              static_cast<off_t>(reinterpret_cast<std::uintptr_t>(p) - OVERPASS_SIM_DEVICE_BASE),
              static_cast<off_t>(span));
    allocated_.erase(it);
  }

  std::mutex traceMutex;
  std::vector<SimCopyRecord> trace;
  std::chrono::microseconds delay{0};
  bool tracing = false;  // set by the tests' hooks (gpu/sim_test_hooks.h): no trace otherwise

 private:
  static constexpr std::size_t kMaxOpened = 64;
  struct Mapping {
    void* place;
    std::size_t span;
    std::uint64_t used;
  };
  using Key = std::tuple<std::int64_t, std::uint64_t, std::uint64_t>;

  static void* host(void* p) { return overpass_sim_is_device(p) ? overpass_sim_alias(p) : p; }
  static const void* host(const void* p) { return host(const_cast<void*>(p)); }
  static void unmap(void* place, std::size_t span) {
    munmap(place, span);
    munmap(overpass_sim_alias(place), span);
  }

  bool openedAt(const void* p) {
    std::lock_guard lock(openMutex_);
    for (const auto& [key, m] : opened_)
      if (p >= m.place && p < static_cast<unsigned char*>(m.place) + m.span) return true;
    return false;
  }
  void evictLeastRecent() {
    auto oldest = opened_.begin();
    for (auto it = opened_.begin(); it != opened_.end(); ++it)
      if (it->second.used < oldest->second.used) oldest = it;
    unmap(oldest->second.place, oldest->second.span);
    opened_.erase(oldest);
  }

  CopyLane lanes_[2] = {{kUp, traceMutex, trace, delay, tracing},
                        {kDown, traceMutex, trace, delay, tracing}};
  std::mutex openMutex_;
  std::map<Key, Mapping> opened_;  // peers' buffers mapped here
  std::uint64_t uses_ = 0;
  std::map<void*, std::size_t> allocated_;  // allocateDevice's, by place
};

SimulatedDeviceMemory& instance() {
  static SimulatedDeviceMemory memory;
  return memory;
}

}  // namespace

DeviceMemory& simulatedDeviceMemory() {
  return instance();
}

void simSetCopyDelay(std::chrono::microseconds delay) {
  std::lock_guard lock(instance().traceMutex);
  instance().delay = delay;
  instance().tracing = true;
}

std::vector<SimCopyRecord> simTakeTrace() {
  std::lock_guard lock(instance().traceMutex);
  return std::exchange(instance().trace, {});
}

}  // namespace overpass
