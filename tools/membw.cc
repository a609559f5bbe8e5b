// overpass-membw: a small STREAM-like probe of this machine's memory bandwidth, the physical
// limit drawn under the benchmark's bus bandwidth. Copies a buffer far larger than the caches
// (best of several passes) and prints the copy bandwidth in GB/s (10^9 bytes read + written per
// second), as STREAM's "Copy" kernel counts it. `-t N` runs N copies at once, one per thread.
// `-x KIB` measures instead how fast data moves between two cores, the cost under every
// shared-memory collective: one thread (on the first cpu the process may use) writes a buffer of
// KIB KiB, another (on the second) copies it into its own, in turns; prints both rates in GB/s
// (bytes per second): the reader's copy, then the writer's overwriting of lines the reader
// holds. `-l` prints the round trip of one cache line between those two cpus in ns: on a virtual
// machine it changes with where the host runs the two virtual cpus (100 ns or 500 ns on the
// machines of docs/PERFORMANCE.md), and with it every shared-memory figure. `--help` describes the
// options; a bad one gets a message naming it and exit status 2.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// The round trip of one cache line between the first two cpus, in ns: the median of 5 runs of
// ping-pongs (each thread waits for the other's count, then writes its own).
double lineRoundTrip() {
  constexpr long kTrips = 1000000;
  struct alignas(128) Line {
    std::atomic<long> count{0};
  };
  std::vector<double> runs;
  const int here = allowedCpu(0), there = allowedCpu(1);  // before this thread is pinned
  for (int run = 0; run < 5; ++run) {
    Line ping, pong;
    std::thread peer([&] {
      pinTo(there);
      for (long i = 1; i <= kTrips; ++i) {
        while (ping.count.load(std::memory_order_acquire) != i) {
        }
        pong.count.store(i, std::memory_order_release);
      }
    });
    pinTo(here);
    const auto start = Clock::now();
    for (long i = 1; i <= kTrips; ++i) {
      ping.count.store(i, std::memory_order_release);
      while (pong.count.load(std::memory_order_acquire) != i) {
      }
    }
    runs.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / kTrips);
    peer.join();
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

constexpr int kExitUsage = 2;
constexpr const char* kUsage =
    "usage: overpass-membw [-t THREADS] [-m MIB] [-x KIB] [-l] [-h|--help]\n";

// An option's number: the whole text a whole number from lo to hi.
struct NumberOption {
  const char* flag;
  long lo, hi;
  const char* what;
};
constexpr NumberOption kThreads{"-t", 1, 1024, "threads, one copy each"};
constexpr NumberOption kMib{"-m", 8, 16384, "MiB per array and thread"};
constexpr NumberOption kCrossKib{"-x", 1, 1 << 20, "KiB moved between two cores"};

void printHelp() {
  std::printf(
      "overpass-membw: this machine's memory copy bandwidth, in GB/s (10^9 bytes read + written\n"
      "per second, as STREAM's Copy counts them): the best of 5 copies of a buffer far larger\n"
      "than the caches.\n\n%s\n"
      "  -t THREADS  copies at once, one per thread (%ld to %ld; default 1)\n"
      "  -m MIB      MiB per array and thread (%ld to %ld; default 256)\n"
      "  -x KIB      instead, how fast KIB KiB (%ld to %ld) move between two cores: one thread\n"
      "              writes a buffer, another on the second cpu copies it, in turns; prints the\n"
      "              reader's rate, then the writer's, in GB/s\n"
      "  -l          instead, the round trip of one cache line between those two cpus, in ns\n"
      "  -h, --help  this help\n",
      kUsage, kThreads.lo, kThreads.hi, kMib.lo, kMib.hi, kCrossKib.lo, kCrossKib.hi);
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "overpass-membw: %s\n%sRun 'overpass-membw --help' for every option.\n",
               message.c_str(), kUsage);
  return kExitUsage;
}

std::optional<long> parseNumber(std::string_view text, const NumberOption& o) {
  long value = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p != end || value < o.lo || value > o.hi) return std::nullopt;
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  long threads = 1;
  long mib = 256;  // per thread, per array
  long crossKib = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      printHelp();
      return 0;
    }
    if (arg == "-l") {
      if (allowedCpu(1) < 0) {
        std::fprintf(stderr, "overpass-membw: -l needs two cpus to run on\n");
        return 1;
      }
      std::printf("%.1f\n", lineRoundTrip());
      return 0;
    }
    const NumberOption* option = arg == kThreads.flag    ? &kThreads
                                 : arg == kMib.flag      ? &kMib
                                 : arg == kCrossKib.flag ? &kCrossKib
                                                         : nullptr;
    if (!option)
      return usageError((arg.starts_with("-") ? "unknown option '" : "unexpected argument '") +
                        std::string(arg) + "'");
    if (i + 1 == argc)
      return usageError(std::string(option->flag) + " needs a value (" + option->what + ", " +
                        std::to_string(option->lo) + " to " + std::to_string(option->hi) + ")");
    const std::optional<long> value = parseNumber(argv[++i], *option);
    if (!value)
      return usageError(std::string(option->flag) + ": '" + argv[i] +
                        "' is not a whole number from " + std::to_string(option->lo) + " to " +
                        std::to_string(option->hi) + " (" + option->what + ")");
    (option == &kThreads ? threads : option == &kMib ? mib : crossKib) = *value;
  }
  if (crossKib > 0) {
    const Rates r = crossCore(static_cast<std::size_t>(crossKib) << 10);
    std::printf("%.2f %.2f\n", r.reader, r.writer);
    return 0;
  }
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
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
