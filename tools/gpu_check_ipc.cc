// The node collectives on device buffers (coll/device/device_ipc.h) across processes, without MPI:
// the parent creates a shared-memory arena and starts `ranks` copies of this program, each a rank
// with device buffers on GPU 0 (or on the simulated device, to check the harness itself on a
// machine without a GPU). Each rank checks allreduce (float sum), bcast and alltoall through IPC
// against the host reference, then times them against staging by hand: device -> host copy, the
// same collective on host memory through the node's shared memory (Overpass's shm algorithms,
// standing in for the MPI library, which such a machine lacks), host -> device copy. Rank 0
// prints the table.
#include "tools/gpu_check_ipc.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/device/device_ipc.h"
#include "gpu/memory.h"
#include "shm/arena.h"
#include "shm/channel.h"

extern char** environ;

namespace overpass::gpucheck {
namespace {

using Clock = std::chrono::steady_clock;

// The harness's ranks talk only through shared memory: no point-to-point transport.
class NoTransport final : public Transport {
 public:
  NoTransport(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status start(std::span<const P2POp>, int, Request*) override { return Status::kInternal; }
  Status test(Request&, bool*) override { return Status::kInternal; }
  Status wait(Request&) override { return Status::kInternal; }

 private:
  int rank_, size_;
};

// Rank r's element i: small integers, exact in any order of summation.
float element(int r, std::size_t i) {
  return static_cast<float>((r * 7 + i * 3) % 5 + 1);
}

struct Case {
  Collective coll;
  std::size_t bytes;  // the buffer on each rank (alltoall: p blocks)
};

class Rank {
 public:
  Rank(Team& team, ShmChannel& ch, DeviceMemory& m) : team_(team), ch_(ch), m_(m) {}

  // Checks and times one case; false if a result was wrong or IPC was declined.
  bool run(const Case& c, int iterations) {
    const int p = ch_.size(), r = ch_.rank();
    const std::size_t n = c.bytes / sizeof(float);
    void* in = m_.allocateDevice(c.bytes);
    void* out = m_.allocateDevice(c.bytes);
    auto* hostIn = static_cast<float*>(m_.allocateHost(c.bytes));
    auto* hostOut = static_cast<float*>(m_.allocateHost(c.bytes));
    std::vector<float> mine(n), want(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = element(r, i);
    CollArgs a;
    a.coll = c.coll;
    a.sendbuf = in;
    a.recvbuf = out;
    a.onDevice = true;  // both allocated on the device
    switch (c.coll) {
      case Collective::kAllreduce:
        a.count = n;
        a.bytes = c.bytes;
        a.type = DataType::kFloat;
        for (std::size_t i = 0; i < n; ++i) {
          want[i] = 0;
          for (int q = 0; q < p; ++q) want[i] += element(q, i);
        }
        break;
      case Collective::kBcast:
        a.bytes = c.bytes;
        a.sendbuf = nullptr;
        for (std::size_t i = 0; i < n; ++i) want[i] = element(0, i);
        break;
      default: {  // alltoall: block q of rank r's result is block r of rank q's buffer
        const std::size_t block = n / p;
        a.bytes = block * sizeof(float);
        for (int q = 0; q < p; ++q)
          for (std::size_t i = 0; i < block; ++i) want[q * block + i] = element(q, r * block + i);
      }
    }
    void* source = c.coll == Collective::kBcast ? out : in;
    bool right = m_.fromHost(source, mine.data(), c.bytes) == Status::kOk;

    // Through IPC: once checked, then timed.
    right = right && deviceIpc(a, team_) == Status::kOk &&
            m_.toHost(hostOut, out, c.bytes) == Status::kOk &&
            std::equal(want.begin(), want.begin() + resultElements(c, a, p), hostOut);
    const double ipc = median(iterations, [&] { deviceIpc(a, team_); });

    // Staging by hand around the host collective.
    CollArgs h = a;
    h.sendbuf = hostIn;
    h.recvbuf = hostOut;
    auto staged = [&] {
      const std::size_t bytes = a.coll == Collective::kAlltoall ? a.bytes * p : c.bytes;
      if (c.coll != Collective::kBcast)
        m_.toHost(hostIn, source, bytes);
      else if (r == a.root)
        m_.toHost(hostOut, source, bytes);
      switch (c.coll) {
        case Collective::kAllreduce:
          allreduceShm(h, team_);
          break;
        case Collective::kBcast:
          bcastShm(h, team_);
          break;
        default:
          alltoallShm(h, team_);
      }
      m_.fromHost(out, hostOut, bytes);
    };
    std::fill(hostOut, hostOut + n, -1.0f);
    staged();
    right = right && m_.toHost(hostOut, out, c.bytes) == Status::kOk &&
            std::equal(want.begin(), want.begin() + resultElements(c, a, p), hostOut);
    const double byHand = median(iterations, staged);

    if (r == 0)
      std::printf("%-10s %9zu KiB  %10.3f ms  %10.3f ms  %7.1fx  %s\n",
                  c.coll == Collective::kAllreduce ? "allreduce"
                  : c.coll == Collective::kBcast   ? "bcast"
                                                   : "alltoall",
                  c.bytes >> 10, ipc * 1e3, byHand * 1e3, byHand / ipc, right ? "ok" : "WRONG");
    m_.freeDevice(in);
    m_.freeDevice(out);
    m_.freeHost(hostIn);
    m_.freeHost(hostOut);
    return right;
  }

 private:
  // Elements of the result (alltoall: p whole blocks, which may be less than the buffer).
  static std::size_t resultElements(const Case& c, const CollArgs& a, int p) {
    return (c.coll == Collective::kAlltoall ? a.bytes * p : c.bytes) / sizeof(float);
  }

  // Every rank starts each iteration together; the median of rank 0's times.
  template <class F>
  double median(int iterations, F&& body) {
    std::vector<double> t;
    for (int i = 0; i < iterations; ++i) {
      ch_.reserve();
      ch_.sync();
      const auto start = Clock::now();
      body();
      t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

  Team& team_;
  ShmChannel& ch_;
  DeviceMemory& m_;
};

}  // namespace

int ipcRank(int rank, int ranks, const std::string& arenaName, bool simulated,
            std::size_t maxBytes) {
  initDeviceMemory(simulated);
  DeviceMemory* m = deviceMemory();
  std::string why;
  auto arena = ShmArena::attach(arenaName, &why);
  if (!m || !arena) {
    std::fprintf(stderr, "overpass-gpu-check rank %d: %s\n", rank,
                 m ? why.c_str() : "no device backend");
    return 2;
  }
  ShmChannel ch(*arena, rank, static_cast<long>(getpid()));
  NoTransport transport(rank, ranks);
  Scratch scratch;
  DeviceScratch deviceScratch;
  Team team{transport, scratch, &ch};
  team.device = m;
  team.deviceScratch = &deviceScratch;
  Rank me(team, ch, *m);
  if (rank == 0)
    std::printf(
        "device collectives, %d processes sharing one device (times: medians)\n"
        "%-10s %13s  %13s  %13s  %7s\n",
        ranks, "collective", "bytes", "IPC", "staged by hand", "speedup");
  int wrong = 0;
  // From latency to bandwidth: where IPC overtakes staging sets its rule's lower bound.
  constexpr std::size_t kKiB = 1024;
  for (std::size_t bytes :
       {4 * kKiB, 16 * kKiB, 64 * kKiB, 256 * kKiB, 1024 * kKiB, 64 * 1024 * kKiB}) {
    if (bytes > maxBytes) break;
    for (Collective coll : {Collective::kAllreduce, Collective::kBcast, Collective::kAlltoall})
      wrong += !me.run({coll, bytes}, bytes >= (std::size_t{64} << 20) ? 5 : 20);
  }
  ch.reserve();  // nobody leaves while another still reads its buffers
  ch.sync();
  return wrong ? 1 : 0;
}

int runIpc(const char* self, int ranks, bool simulated, std::size_t maxBytes) {
  const std::string name = "/overpass-gpucheck-" + std::to_string(getpid());
  std::string why;
  auto arena = ShmArena::create(name, ranks, std::size_t{128} << 10, &why);
  if (!arena) {
    std::fprintf(stderr, "overpass-gpu-check: %s\n", why.c_str());
    return 2;
  }
  std::vector<pid_t> children;
  for (int r = 0; r < ranks; ++r) {
    std::vector<std::string> args = {
        self, "--ipc-child",           std::to_string(r), std::to_string(ranks),
        name, std::to_string(maxBytes)};
    if (simulated) args.push_back("--sim");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) {
      std::perror("overpass-gpu-check: posix_spawn");
      break;
    }
    children.push_back(pid);
  }
  int failed = static_cast<int>(children.size()) != ranks;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  ShmArena::unlink(name);
  return failed;
}

}  // namespace overpass::gpucheck
