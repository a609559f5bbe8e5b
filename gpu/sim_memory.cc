#include "gpu/sim_memory.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "gpu/sim_device.h"

namespace overpass {
namespace {

using Clock = std::chrono::steady_clock;

// One lane: a worker thread running queued copies in order.
class CopyLane {
 public:
  CopyLane(int id, std::mutex& traceMutex, std::vector<SimCopyRecord>& trace,
           std::chrono::microseconds& delay)
      : id_(id), traceMutex_(traceMutex), trace_(trace), delay_(delay) {}
  ~CopyLane() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  std::uint64_t start(void* dst, const void* src, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
    queue_.push_back({dst, src, bytes, ++issued_});
    wake_.notify_all();
    return issued_;
  }
  void wait(std::uint64_t seq) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return completed_ >= seq; });
  }

 private:
  struct Job {
    void* dst;
    const void* src;
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
      std::memcpy(job.dst, job.src, job.bytes);
      std::chrono::microseconds delay;
      {
        std::lock_guard traceLock(traceMutex_);
        delay = delay_;
      }
      if (delay.count()) std::this_thread::sleep_until(record.start + delay);
      record.end = Clock::now();
      {
        std::lock_guard traceLock(traceMutex_);
        trace_.push_back(record);
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
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Job> queue_;
  std::uint64_t issued_ = 0, completed_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

class SimulatedDeviceMemory final : public DeviceMemory {
 public:
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
    if (overpass_sim_is_device(dst)) dst = overpass_sim_alias(dst);
    if (overpass_sim_is_device(src)) src = overpass_sim_alias(src);
    *ticket = {lane, lanes_[lane].start(dst, src, bytes)};
    return Status::kOk;
  }
  Status wait(const Ticket& ticket) override {
    if (ticket.lane >= 0) lanes_[ticket.lane].wait(ticket.seq);
    return Status::kOk;
  }

  std::mutex traceMutex;
  std::vector<SimCopyRecord> trace;
  std::chrono::microseconds delay{0};

 private:
  CopyLane lanes_[2] = {{kUp, traceMutex, trace, delay}, {kDown, traceMutex, trace, delay}};
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
}

std::vector<SimCopyRecord> simTakeTrace() {
  std::lock_guard lock(instance().traceMutex);
  return std::exchange(instance().trace, {});
}

}  // namespace overpass
