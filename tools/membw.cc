// overpass-membw: a small STREAM-like probe of this machine's memory bandwidth, the physical
// limit drawn under the benchmark's bus bandwidth. Copies a buffer far larger than the caches
// (best of several passes) and prints the copy bandwidth in GB/s (10^9 bytes read + written per
// second), as STREAM's "Copy" kernel counts it. `-t N` runs N copies at once, one per thread.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int threads = 1;
  std::size_t mib = 256;  // per thread, per array
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "-t") threads = std::max(1, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "-m") mib = std::max(8, std::atoi(argv[i + 1]));
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
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { std::memcpy(dst[t].get(), src[t].get(), bytes); });
    for (auto& w : workers) w.join();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("%.2f\n", 2.0 * static_cast<double>(bytes) * threads / best / 1e9);
  return 0;
}
