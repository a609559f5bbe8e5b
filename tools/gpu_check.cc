// overpass-gpu-check: checks and measures Overpass's GPU layer on a machine with a GPU, without
// MPI (scripts/gpu-check runs it where no MPI library is installed). Prints one table and exits
// non-zero if a check fails:
//   - memory kinds: cudaMalloc, cudaMallocManaged, cudaMallocHost, a stream-ordered pool
//     allocation, malloc; a freed and reallocated address gets a new buffer id;
//   - every device reduction kernel (type x op) against the host kernels, bit for bit;
//   - the float-sum kernel's bandwidth against a device-to-device copy (goal: >= 80%);
//   - the staging pipeline on real CUDA lanes against staging whole buffers;
//   - copies on a thread that never used CUDA, with another thread's context made current;
//   - allreduce, bcast and alltoall on device buffers of 4 ranks (processes sharing the GPU)
//     through CUDA IPC, checked and timed against staging by hand (tools/gpu_check_ipc.h).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpu/memory.h"
#include "gpu/staging_pipeline.h"
#include "kernels/reduce_kernels.h"
#include "tools/gpu_check_ipc.h"

namespace {

using overpass::DataType;
using overpass::DeviceMemory;
using overpass::MemoryKind;
using overpass::ReduceOp;
using overpass::Status;
using Clock = std::chrono::steady_clock;

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%-60s %s\n", what.c_str(), ok ? "ok" : "FAILED");
  if (!ok) ++failures;
}

void cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "overpass-gpu-check: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void memoryKinds(DeviceMemory& m) {
  void *dev = nullptr, *managed = nullptr, *pinned = nullptr, *pooled = nullptr;
  cuda(cudaMalloc(&dev, 1 << 20), "cudaMalloc");
  cuda(cudaMallocManaged(&managed, 1 << 20), "cudaMallocManaged");
  cuda(cudaMallocHost(&pinned, 1 << 20), "cudaMallocHost");
  cuda(cudaMallocAsync(&pooled, 1 << 20, nullptr), "cudaMallocAsync");
  cuda(cudaStreamSynchronize(nullptr), "sync");
  std::vector<char> plain(1 << 20);
  const auto d = m.classify(dev), g = m.classify(managed), h = m.classify(pinned),
             p = m.classify(pooled), s = m.classify(plain.data());
  check(d.kind == MemoryKind::kDevice && d.ipcExportable, "cudaMalloc: device, IPC-exportable");
  check(g.kind == MemoryKind::kManaged && !g.ipcExportable, "cudaMallocManaged: managed");
  check(h.kind == MemoryKind::kHost, "cudaMallocHost: host");
  check(p.kind == MemoryKind::kDevice && !p.ipcExportable, "cudaMallocAsync: device, staged");
  check(s.kind == MemoryKind::kHost, "malloc: host");
  const auto id = d.bufferId;
  cuda(cudaFree(dev), "cudaFree");
  cuda(cudaMalloc(&dev, 1 << 20), "cudaMalloc");
  check(m.classify(dev).bufferId != id, "reallocation: a new buffer id");
  cudaFree(dev);
  cudaFree(managed);
  cudaFreeHost(pinned);
  cudaFreeAsync(pooled, nullptr);
  cudaStreamSynchronize(nullptr);
}

// The bytes of one element that hold its value: all of them, except in the pair types of
// MINLOC/MAXLOC, whose padding (after a short value, or after the int index) is no part of the
// result: the host kernels copy it from an operand, the device kernels write what they like.
template <class V, class I>
struct Pair {
  V value;
  I index;
};
struct Field {
  std::size_t offset, bytes;
};
template <class V, class I>
std::vector<Field> pairFields() {
  using P = Pair<V, I>;
  return {{offsetof(P, value), sizeof(V)}, {offsetof(P, index), sizeof(I)}};
}
std::vector<Field> valueFields(DataType t) {
  switch (t) {
    case DataType::kFloatInt:
      return pairFields<float, int>();
    case DataType::kDoubleInt:
      return pairFields<double, int>();
    case DataType::kLongInt:
      return pairFields<long, int>();
    case DataType::kIntInt:
      return pairFields<int, int>();
    case DataType::kShortInt:
      return pairFields<short, int>();
    case DataType::kFloatFloat:
      return pairFields<float, float>();
    case DataType::kDoubleDouble:
      return pairFields<double, double>();
    default:
      return {{0, overpass::dataTypeSize(t)}};
  }
}

// Whether n elements of type t at a and b hold the same values, bit for bit.
bool sameValues(const unsigned char* a, const unsigned char* b, std::size_t n, DataType t) {
  const std::size_t size = overpass::dataTypeSize(t);
  const std::vector<Field> fields = valueFields(t);
  for (std::size_t i = 0; i < n; ++i)
    for (const Field& f : fields)
      if (std::memcmp(a + i * size + f.offset, b + i * size + f.offset, f.bytes) != 0) return false;
  return true;
}

void kernels(DeviceMemory& m) {
  const std::size_t n = 100003;
  std::mt19937 gen(7);
  int checked = 0, wrong = 0;
  for (int t = 0; t < static_cast<int>(DataType::kCount); ++t)
    for (int o = 0; o < static_cast<int>(ReduceOp::kCount); ++o) {
      const auto type = static_cast<DataType>(t);
      const auto op = static_cast<ReduceOp>(o);
      if (!m.canReduce(type, op)) continue;
      const std::size_t bytes = n * overpass::dataTypeSize(type);
      std::vector<unsigned char> a(bytes), b(bytes), want(bytes), got(bytes);
      for (auto& x : a) x = static_cast<unsigned char>(gen() % 7);  // small: no inf, few NaN
      for (auto& x : b) x = static_cast<unsigned char>(gen() % 7);
      overpass::reduceInto(a.data(), b.data(), want.data(), n, type, op);
      void *da, *db, *dout;
      cuda(cudaMalloc(&da, bytes), "cudaMalloc");
      cuda(cudaMalloc(&db, bytes), "cudaMalloc");
      cuda(cudaMalloc(&dout, bytes), "cudaMalloc");
      cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
      cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
      DeviceMemory::Ticket ticket;
      const bool ran =
          m.startReduce(DeviceMemory::kDown, da, db, dout, n, type, op, &ticket) == Status::kOk &&
          m.wait(ticket) == Status::kOk;
      cudaMemcpy(got.data(), dout, bytes, cudaMemcpyDeviceToHost);
      ++checked;
      if (!ran || !sameValues(got.data(), want.data(), n, type)) {
        ++wrong;
        std::printf("  kernel %s/%s differs from the host\n",
                    std::string(overpass::dataTypeName(type)).c_str(),
                    std::string(overpass::reduceOpName(op)).c_str());
      }
      cudaFree(da);
      cudaFree(db);
      cudaFree(dout);
    }
  check(wrong == 0 && checked > 0,
        "device kernels equal the host kernels (" + std::to_string(checked) + " type x op)");
}

void bandwidth(DeviceMemory& m) {
  const std::size_t n = std::size_t{64} << 20, bytes = n * sizeof(float);  // 256 MiB per operand
  void *a, *b, *out;
  cuda(cudaMalloc(&a, bytes), "cudaMalloc");
  cuda(cudaMalloc(&b, bytes), "cudaMalloc");
  cuda(cudaMalloc(&out, bytes), "cudaMalloc");
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  cudaDeviceSynchronize();
  auto best = [](auto&& run) {
    double t = 1e30;
    for (int i = 0; i < 5; ++i) {
      const auto start = Clock::now();
      run();
      t = std::min(t, seconds(start, Clock::now()));
    }
    return t;
  };
  const double copy = best([&] {
    cudaMemcpy(out, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
  });
  const double reduce = best([&] {
    DeviceMemory::Ticket t;
    m.startReduce(DeviceMemory::kDown, a, b, out, n, DataType::kFloat, ReduceOp::kSum, &t);
    m.wait(t);
  });
  const double copyRate = 2.0 * bytes / copy / 1e9, reduceRate = 3.0 * bytes / reduce / 1e9;
  std::printf("%-60s %.0f GB/s\n", "device copy (read + write)", copyRate);
  std::printf("%-60s %.0f GB/s\n", "float sum kernel (2 reads + write)", reduceRate);
  check(reduceRate >= 0.8 * copyRate, "float sum kernel >= 80% of the copy bandwidth");
  cudaFree(a);
  cudaFree(b);
  cudaFree(out);
}

void pipeline(DeviceMemory& m) {
  const std::size_t bytes = std::size_t{64} << 20;
  void *in, *out;
  cuda(cudaMalloc(&in, bytes), "cudaMalloc");
  cuda(cudaMalloc(&out, bytes), "cudaMalloc");
  std::vector<unsigned char> source(bytes), result(bytes);
  for (std::size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>(i * 13);
  cudaMemcpy(in, source.data(), bytes, cudaMemcpyHostToDevice);
  auto run = [&](std::size_t chunk) {
    const overpass::PipelinePlan plan{bytes, chunk, 3};
    std::vector<unsigned char> staging(overpass::pipelineStagingBytes(plan));
    const auto start = Clock::now();
    const Status s =
        overpass::runPipelined(m, in, onDevice(m, in), out, onDevice(m, out), plan, staging.data(),
                               [](std::size_t, std::size_t n, const void* a, void* b) {
                                 const auto* x = static_cast<const unsigned char*>(a);
                                 auto* y = static_cast<unsigned char*>(b);
                                 for (std::size_t i = 0; i < n; ++i)
                                   y[i] = static_cast<unsigned char>(x[i] ^ 0x5a);
                                 return Status::kOk;
                               });
    const double t = seconds(start, Clock::now());
    cudaMemcpy(result.data(), out, bytes, cudaMemcpyDeviceToHost);
    bool right = s == Status::kOk;
    for (std::size_t i = 0; right && i < bytes; ++i) right = result[i] == (source[i] ^ 0x5a);
    return std::pair{t, right};
  };
  const auto whole = run(bytes), chunked = run(std::size_t{1} << 20);
  std::printf("%-60s %.2f ms\n", "64 MiB through host memory, whole", whole.first * 1e3);
  std::printf("%-60s %.2f ms\n", "64 MiB through host memory, 1 MiB chunks, depth 3",
              chunked.first * 1e3);
  check(whole.second && chunked.second, "staging pipeline on CUDA lanes: results");
  cudaFree(in);
  cudaFree(out);
}

// A nonblocking collective on device buffers may run on a thread that never used CUDA (Overpass's
// progress thread): it takes the posting thread's context along (DeviceMemory::setContext).
void contexts(DeviceMemory& m) {
  void* context = m.context();
  const std::size_t bytes = std::size_t{1} << 20;
  void* dev = nullptr;
  cuda(cudaMalloc(&dev, bytes), "cudaMalloc");
  std::vector<unsigned char> host(bytes, 7), back(bytes, 0);
  bool bare = false, copied = false, restored = false;
  std::thread([&] {
    bare = m.context() == nullptr;
    void* previous = m.setContext(context);
    copied = m.fromHost(dev, host.data(), bytes) == Status::kOk &&
             m.toHost(back.data(), dev, bytes) == Status::kOk && back == host;
    restored = m.setContext(previous) == context && m.context() == nullptr;
  }).join();
  check(context != nullptr && bare, "a new thread: no current CUDA context");
  check(copied, "copies on that thread with the posting thread's context");
  check(restored, "its own (no) context restored after");
  cudaFree(dev);
}

constexpr int kExitUsage = 2;
constexpr int kMaxRanks = 64;
constexpr unsigned long long kMinBytes = 4096, kMaxBytes = 1ULL << 40;
constexpr const char* kUsage =
    "usage: overpass-gpu-check [--ranks N] [--max-bytes B] [--sim] [-h|--help]\n";

void printHelp() {
  std::printf(
      "overpass-gpu-check: checks and measures Overpass's GPU layer on this machine's GPU 0,\n"
      "without MPI (scripts/gpu-check builds and runs it): memory kinds, every device\n"
      "reduction kernel against the host kernels, kernel and copy bandwidth, the staging\n"
      "pipeline, then allreduce, bcast and alltoall on device buffers of N processes through\n"
      "CUDA IPC against staging by hand. Prints one table; exit status 1 if a check fails, 2\n"
      "where no GPU can be used or on a bad command line.\n\n%s\n"
      "  --ranks N      processes of the IPC part, sharing GPU 0 (2 to %d; default 4)\n"
      "  --max-bytes B  the largest case of the IPC part, of 4 KiB to 64 MiB (bytes,\n"
      "                 %llu to %llu; default 67108864)\n"
      "  --sim          the IPC part only, on the simulated device (checks the harness\n"
      "                 without a GPU)\n"
      "  -h, --help     this help\n",
      kUsage, kMaxRanks, kMinBytes, kMaxBytes);
}

int usageError(const std::string& message) {
  std::fprintf(stderr,
               "overpass-gpu-check: %s\n%sRun 'overpass-gpu-check --help' for every option.\n",
               message.c_str(), kUsage);
  return kExitUsage;
}

// The whole text a whole number from lo to hi.
bool parseNumber(std::string_view text, unsigned long long lo, unsigned long long hi,
                 unsigned long long* value) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && p == end && *value >= lo && *value <= hi;
}

}  // namespace

// Usage: overpass-gpu-check [--ranks N] [--max-bytes B] [--sim] (--help says more); the ranks of
// the IPC part are copies of this program started with --ipc-child.
int main(int argc, char** argv) {
  int ranks = 4;
  bool simulated = false;
  std::size_t maxBytes = std::size_t{64} << 20;
  if (argc >= 6 && std::strcmp(argv[1], "--ipc-child") == 0) {
    simulated = argc > 6 && std::strcmp(argv[6], "--sim") == 0;
    if (!simulated) {
      cuda(cudaSetDevice(0), "cudaSetDevice");
      cuda(cudaFree(nullptr), "context");
    }
    return overpass::gpucheck::ipcRank(std::atoi(argv[2]), std::atoi(argv[3]), argv[4], simulated,
                                       std::strtoull(argv[5], nullptr, 10));
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    unsigned long long value = 0;
    if (arg == "-h" || arg == "--help") {
      printHelp();
      return 0;
    } else if (arg == "--sim") {
      simulated = true;
    } else if (arg == "--ranks" || arg == "--max-bytes") {
      const bool isRanks = arg == "--ranks";
      const unsigned long long lo = isRanks ? 2 : kMinBytes, hi = isRanks ? kMaxRanks : kMaxBytes;
      const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
      if (i + 1 == argc)
        return usageError(arg + " needs a value (a whole number from " + range + ")");
      if (!parseNumber(argv[++i], lo, hi, &value))
        return usageError(arg + ": '" + argv[i] + "' is not a whole number from " + range);
      if (isRanks)
        ranks = static_cast<int>(value);
      else
        maxBytes = static_cast<std::size_t>(value);
    } else {
      return usageError((arg.starts_with("-") ? "unknown option '" : "unexpected argument '") +
                        arg + "'");
    }
  }
  if (simulated) {
    std::printf("overpass-gpu-check: the IPC part on the simulated device\n");
    std::fflush(stdout);
    const int rc = overpass::gpucheck::runIpc(argv[0], ranks, true, maxBytes);
    std::printf("%s\n",
                rc ? "overpass-gpu-check: FAILED" : "overpass-gpu-check: all checks passed");
    return rc ? 1 : 0;
  }
  int devices = 0;
  cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  cuda(cudaSetDevice(0), "cudaSetDevice");
  cuda(cudaFree(nullptr), "context");
  overpass::initDeviceMemory(false);
  DeviceMemory* m = overpass::deviceMemory();
  if (!m) {
    std::fprintf(stderr, "overpass-gpu-check: Overpass's CUDA backend did not activate\n");
    return 2;
  }
  std::printf("overpass-gpu-check: %d device(s), backend %s\n", devices,
              std::string(m->name()).c_str());
  memoryKinds(*m);
  kernels(*m);
  bandwidth(*m);
  pipeline(*m);
  contexts(*m);
  std::fflush(stdout);
  check(overpass::gpucheck::runIpc(argv[0], ranks, false, maxBytes) == 0,
        "device collectives through CUDA IPC: results");
  std::printf("%s\n",
              failures ? "overpass-gpu-check: FAILED" : "overpass-gpu-check: all checks passed");
  return failures ? 1 : 0;
}
