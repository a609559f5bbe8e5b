// overpass-membw: a small STREAM-like probe of this machine's memory bandwidth, the physical
// limit drawn under the benchmark's bus bandwidth. Copies a buffer far larger than the caches
// (best of several passes) and prints the copy bandwidth in GB/s (10^9 bytes read + written per
// second), as STREAM's "Copy" kernel counts it. `-t N` runs N copies at once, one per thread.
// `-x KIB` measures instead how fast data moves between two cores, the cost under every
// shared-memory collective: one thread (on the first cpu the process may use) writes a buffer of
// KIB KiB, another (on the second) copies it into its own, in turns; prints both rates in GB/s
// (bytes per second): the reader's copy, then the writer's overwriting of lines the reader
// holds.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// The n-th cpu this process may run on (or -1).
int allowedCpu(int n) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set) && n-- == 0) return cpu;
  return -1;
}

void pinTo(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct Rates {
  double reader, writer;
};

Rates crossCore(std::size_t bytes) {
  constexpr int kTurns = 2000;
  std::vector<char> shared(bytes), own(bytes);
  std::atomic<int> turn{0};  // even: the writer's turn, odd: the reader's
  double seconds = 0, writing = 0;
  const int writerCpu = allowedCpu(0), readerCpu = allowedCpu(1);
  std::thread writer([&] {
    pinTo(writerCpu);
    for (int i = 0; i < kTurns; ++i) {
      while (turn.load(std::memory_order_acquire) != 2 * i) {
      }
      const auto start = Clock::now();
      std::memset(shared.data(), i, bytes);
      if (i >= kTurns / 10) writing += std::chrono::duration<double>(Clock::now() - start).count();
      turn.store(2 * i + 1, std::memory_order_release);
    }
  });
  std::thread reader([&] {
    pinTo(readerCpu);
    for (int i = 0; i < kTurns; ++i) {
      while (turn.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      const auto start = Clock::now();
      std::memcpy(own.data(), shared.data(), bytes);
      if (i >= kTurns / 10) seconds += std::chrono::duration<double>(Clock::now() - start).count();
      turn.store(2 * i + 2, std::memory_order_release);
    }
  });
  writer.join();
  reader.join();
  const double moved = static_cast<double>(bytes) * (kTurns - kTurns / 10) / 1e9;
  return {moved / seconds, moved / writing};
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  std::size_t mib = 256;  // per thread, per array
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "-t") threads = std::max(1, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "-m") mib = std::max(8, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "-x") {
      const Rates r = crossCore(std::size_t(std::max(1, std::atoi(argv[i + 1]))) << 10);
      std::printf("%.2f %.2f\n", r.reader, r.writer);
      return 0;
    }
  }
  const std::size_t bytes = mib << 20;
  std::vector<std::unique_ptr<char[]>> src, dst;
  for (int t = 0; t < threads; ++t) {
    src.emplace_back(new char[bytes]);
    dst.emplace_back(new char[bytes]);
    std::memset(src.back().get(), 1, bytes);  // touch every page before timing
    std::memset(dst.back().get(), 0, bytes);
  }
  double best = 1e30;
  for (int pass = 0; pass < 5; ++pass) {
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { std::memcpy(dst[t].get(), src[t].get(), bytes); });
    for (auto& w : workers) w.join();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::printf("%.2f\n", 2.0 * static_cast<double>(bytes) * threads / best / 1e9);
  return 0;
}
