// overpass-bench: a collective benchmark for plain MPI programs, in the manner of nccl-tests and
// the OSU micro-benchmarks. It links only MPI, so the same binary run with and without
// LD_PRELOAD=liboverpass.so compares Overpass with the MPI library's own collectives. Sizes
// follow nccl-tests; with -c 1 every (collective, size, in-place mode) is followed by one call on
// fresh data whose result each rank checks exactly against values it regenerates locally. The
// v-collectives take their per-rank counts from a pattern (--counts) every rank derives alike.
// Nonblocking forms: --nonblocking times MPI_I<coll> + MPI_Wait per call as the blocking calls
// are timed; --overlap, the overlap of MPI_I<coll> with computation as the OSU micro-benchmarks
// define it; --burst N, N calls of MPI_I<coll> completed by one MPI_Waitall.
// --paired times the MPI library's own call (PMPI_<coll>) beside the call under test, their
// batches alternating, for a ratio of two measurements made in the same seconds.
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <time.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tools/line_probe.h"
#include "tools/size_text.h"

#ifdef OVERPASS_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "gpu/sim_device.h"

namespace overpass::bench {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kCacheLine = 64;                      // --fresh: one write per line
constexpr std::size_t kAlign = 4096;                        // buffer alignment and rotation stride
constexpr std::size_t kDefaultLlcBytes = 64 * kKiB * kKiB;  // when sysfs does not say
constexpr std::size_t kFillChunkBytes = kKiB * kKiB;
constexpr std::int64_t kMaxRange = std::int64_t{1} << 20;  // largest |value| the checks use
constexpr double kMaxItersPerBatch = 1 << 24;              // bound of --time's iteration count
constexpr double kCalibrationShare = 0.1;                  // of --time spent choosing the count
constexpr double kMaxBurstBytes = 1 << 30;                 // --burst x --maxbytes, per region
constexpr int kExitWrong = 1;
constexpr int kExitUsage = 2;
const MPI_Comm kComm = MPI_COMM_WORLD;  // an address, but not a constant expression
constexpr int kNameWidth = 21;          // of the first column: "ireduce_scatter_block"

// ---------------------------------------------------------------------------------------------
// Element types and operations.

enum class DataType { kInt8, kUint8, kInt32, kUint32, kInt64, kUint64, kFloat, kDouble };
enum class ReduceOp { kSum, kProd, kMin, kMax };

struct TypeInfo {
  DataType type;
  const char* name;
  MPI_Datatype mpi;
  std::size_t size;
  bool isSigned;
  // Largest magnitude every value and every partial result of a check stays within: exact in the
  // type and below its maximum, which is the sentinel for "not written".
  std::int64_t exactLimit;
};

const std::vector<TypeInfo>& typeTable() {
  static const std::vector<TypeInfo> table = {
      {DataType::kInt8, "int8", MPI_INT8_T, 1, true, 126},
      {DataType::kUint8, "uint8", MPI_UINT8_T, 1, false, 254},
      {DataType::kInt32, "int32", MPI_INT32_T, 4, true,
       std::numeric_limits<std::int32_t>::max() - 1},
      {DataType::kUint32, "uint32", MPI_UINT32_T, 4, false,
       std::int64_t{std::numeric_limits<std::uint32_t>::max()} - 1},
      {DataType::kInt64, "int64", MPI_INT64_T, 8, true, std::int64_t{1} << 62},
      {DataType::kUint64, "uint64", MPI_UINT64_T, 8, false, std::int64_t{1} << 62},
      {DataType::kFloat, "float", MPI_FLOAT, 4, true, std::int64_t{1} << 24},
      {DataType::kDouble, "double", MPI_DOUBLE, 8, true, std::int64_t{1} << 53},
  };
  return table;
}

struct OpInfo {
  ReduceOp op;
  const char* name;
  MPI_Op mpi;
};

const std::vector<OpInfo>& opTable() {
  static const std::vector<OpInfo> table = {
      {ReduceOp::kSum, "sum", MPI_SUM},
      {ReduceOp::kProd, "prod", MPI_PROD},
      {ReduceOp::kMin, "min", MPI_MIN},
      {ReduceOp::kMax, "max", MPI_MAX},
  };
  return table;
}

// Calls f.operator()<T>() with the C++ type of t.
template <typename F>
decltype(auto) withType(DataType t, F&& f) {
  switch (t) {
    case DataType::kInt8:
      return f.template operator()<std::int8_t>();
    case DataType::kUint8:
      return f.template operator()<std::uint8_t>();
    case DataType::kInt32:
      return f.template operator()<std::int32_t>();
    case DataType::kUint32:
      return f.template operator()<std::uint32_t>();
    case DataType::kInt64:
      return f.template operator()<std::int64_t>();
    case DataType::kUint64:
      return f.template operator()<std::uint64_t>();
    case DataType::kFloat:
      return f.template operator()<float>();
    case DataType::kDouble:
      break;
  }
  return f.template operator()<double>();
}

std::int64_t combine(ReduceOp op, std::int64_t a, std::int64_t b) {
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kProd:
      return a * b;
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      break;
  }
  return std::max(a, b);
}

// ---------------------------------------------------------------------------------------------
// Collectives.

enum class Coll {
  kAllreduce,
  kBcast,
  kReduce,
  kScatter,
  kGather,
  kAllgather,
  kAlltoall,
  kReduceScatterBlock,
  kBarrier,
  kAllgatherv,
  kAlltoallv,
  kGatherv,
  kScatterv,
  kReduceScatter,
  kScan,
  kExscan
};

struct CollInfo {
  Coll coll;
  const char* name;
  bool reduces;
  bool rooted;
  bool hasInPlace;  // MPI defines an MPI_IN_PLACE form
  bool blocks;      // the size is split into one block per rank
  bool varies;      // per-rank counts (the v-collectives and reduce_scatter): --counts applies
};

// The order of --coll all.
constexpr CollInfo kColls[] = {
    {Coll::kAllreduce, "allreduce", true, false, true, false, false},
    {Coll::kBcast, "bcast", false, true, false, false, false},
    {Coll::kReduce, "reduce", true, true, true, false, false},
    {Coll::kScatter, "scatter", false, true, true, true, false},
    {Coll::kGather, "gather", false, true, true, true, false},
    {Coll::kAllgather, "allgather", false, false, true, true, false},
    {Coll::kAlltoall, "alltoall", false, false, true, true, false},
    {Coll::kReduceScatterBlock, "reduce_scatter_block", true, false, true, true, false},
    {Coll::kBarrier, "barrier", false, false, false, false, false},
    {Coll::kAllgatherv, "allgatherv", false, false, true, true, true},
    {Coll::kAlltoallv, "alltoallv", false, false, true, true, true},
    {Coll::kGatherv, "gatherv", false, true, true, true, true},
    {Coll::kScatterv, "scatterv", false, true, true, true, true},
    {Coll::kReduceScatter, "reduce_scatter", true, false, true, true, true},
    {Coll::kScan, "scan", true, false, true, false, false},
    {Coll::kExscan, "exscan", true, false, true, false, false},
};

const CollInfo& collInfo(Coll c) {
  return kColls[static_cast<int>(c)];
}

// busbw = algbw * factor, the nccl-tests convention.
double busFactor(Coll c, int np) {
  const double n = np;
  switch (c) {
    case Coll::kAllreduce:
      return 2.0 * (n - 1) / n;
    case Coll::kScatter:
    case Coll::kGather:
    case Coll::kAllgather:
    case Coll::kAlltoall:
    case Coll::kReduceScatterBlock:
    case Coll::kAllgatherv:
    case Coll::kAlltoallv:
    case Coll::kGatherv:
    case Coll::kScatterv:
    case Coll::kReduceScatter:
      return (n - 1) / n;
    case Coll::kBcast:
    case Coll::kReduce:
    // Scan and exscan have no nccl-tests convention: each rank's vector crosses one link, as in
    // reduce.
    case Coll::kScan:
    case Coll::kExscan:
      return 1.0;
    case Coll::kBarrier:
      break;
  }
  return 0.0;
}

// Count patterns (--counts) of the collectives with per-rank counts. Every rank derives every
// rank's counts from the pattern, so no call exchanges them. In blocks of the uniform pattern:
// - uniform: every rank's block is one block;
// - skewed: one rank's block is kSkew blocks, the others' one: in gatherv and scatterv the rank
//   after the root, (root + 1) mod np, so that the large block crosses between ranks; rank 0 in
//   the others (alltoallv: every block it sends and every block sent to it);
// - half-zero: the ranks at an odd distance from the root (gatherv, scatterv) or from rank 0 (the
//   others) have no elements (alltoallv: they send none and are sent none), the others one block.
// Alltoallv's counts are symmetric (rank i sends rank j what j sends i), so that its in-place form
// is defined for every pattern.
enum class CountPattern { kUniform, kSkewed, kHalfZero };

constexpr const char* kPatternNames[] = {"uniform", "skewed", "half-zero"};
constexpr std::size_t kSkew = 10;

struct Pattern {
  CountPattern kind = CountPattern::kUniform;
  int np = 1;
  int heavy = 0;   // skewed: the rank with kSkew blocks
  int origin = 0;  // half-zero: the distance is counted from this rank

  // Blocks of rank r: its contribution (allgatherv, gatherv), its share (scatterv,
  // reduce_scatter).
  std::size_t weight(int r) const {
    switch (kind) {
      case CountPattern::kUniform:
        break;
      case CountPattern::kSkewed:
        return r == heavy ? kSkew : 1;
      case CountPattern::kHalfZero:
        return (r - origin + np) % np % 2 ? 0 : 1;
    }
    return 1;
  }
  // Blocks rank i sends rank j in alltoallv (symmetric).
  std::size_t pair(int i, int j) const {
    if (kind == CountPattern::kSkewed) return i == heavy || j == heavy ? kSkew : 1;
    return weight(i) * weight(j);
  }
};

Pattern makePattern(CountPattern kind, Coll c, int root, int np) {
  Pattern p;
  p.kind = kind;
  p.np = np;
  if (collInfo(c).rooted) {
    p.heavy = (root + 1) % np;
    p.origin = root;
  }
  return p;
}

// One size of one collective, in nccl-tests terms. The v-collectives have the size of their
// block counterparts in the uniform pattern (allgatherv: allgather's, reduce_scatter:
// reduce_scatter_block's); scan and exscan that of allreduce (the vector of each rank).
struct Shape {
  std::size_t bytes = 0;      // the reported size
  std::size_t count = 0;      // bytes / type size
  std::size_t block = 0;      // the MPI count argument (per-rank counts: the uniform block)
  std::size_t sendBytes = 0;  // span of the send buffer on the rank that uses most (per-rank
  std::size_t recvBytes = 0;  // counts: on this rank); of the receive buffer (in-place included)
  double dataBytes = 0;       // what algbw divides: bytes, or what the count pattern moves
  bool fits = true;           // false: a count or displacement beyond MPI's int
  // Per-rank counts: this rank's counts and displacements, per rank (alltoallv: those of its row,
  // sent and received alike), in elements.
  std::vector<int> counts;
  std::vector<int> displs;
};

// Empty when the size holds no element (per rank, for the block collectives).
std::optional<Shape> makeShape(Coll c, std::size_t requested, std::size_t typeSize, int np,
                               int rank, const Pattern& pattern) {
  Shape s;
  if (c == Coll::kBarrier) return s;
  const std::size_t n = static_cast<std::size_t>(np);
  if (!collInfo(c).blocks) {
    s.count = requested / typeSize;
    if (s.count == 0) return std::nullopt;
    s.block = s.count;
    s.bytes = s.count * typeSize;
    s.sendBytes = s.recvBytes = s.bytes;
    s.dataBytes = static_cast<double>(s.bytes);
    return s;
  }
  s.block = requested / typeSize / n;
  if (s.block == 0) return std::nullopt;
  s.count = s.block * n;
  s.bytes = s.count * typeSize;
  s.dataBytes = static_cast<double>(s.bytes);
  const std::size_t blockBytes = s.block * typeSize;
  if (collInfo(c).varies) {
    constexpr std::size_t kIntMax = std::numeric_limits<int>::max();
    const bool pairs = c == Coll::kAlltoallv;
    std::size_t total = 0;  // elements of this rank's counts
    for (int r = 0; r < np; ++r) {
      const std::size_t elems = s.block * (pairs ? pattern.pair(rank, r) : pattern.weight(r));
      s.counts.push_back(static_cast<int>(std::min(elems, kIntMax)));
      s.displs.push_back(static_cast<int>(std::min(total, kIntMax)));
      total += elems;
    }
    // The largest total of any rank decides alike everywhere whether the size fits.
    std::size_t largest = total;
    if (pairs) {
      double moved = 0;
      for (int i = 0; i < np; ++i) {
        std::size_t row = 0;
        for (int j = 0; j < np; ++j) row += s.block * pattern.pair(i, j);
        largest = std::max(largest, row);
        moved += static_cast<double>(row);
      }
      s.dataBytes = moved / np * static_cast<double>(typeSize);  // per rank, as alltoall's
    } else {
      s.dataBytes = static_cast<double>(total * typeSize);
    }
    s.fits = largest <= kIntMax;
    const std::size_t mine = static_cast<std::size_t>(s.counts[rank]) * typeSize;
    switch (c) {
      case Coll::kAllgatherv:
      case Coll::kGatherv:
        s.sendBytes = mine;
        s.recvBytes = total * typeSize;
        break;
      case Coll::kScatterv:
        s.sendBytes = total * typeSize;
        s.recvBytes = mine;
        break;
      default:  // alltoallv; reduce_scatter (whose in-place form needs the whole vector)
        s.sendBytes = s.recvBytes = total * typeSize;
        break;
    }
    return s;
  }
  switch (c) {
    case Coll::kScatter:
      s.sendBytes = s.bytes;
      s.recvBytes = blockBytes;
      break;
    case Coll::kGather:
    case Coll::kAllgather:
      s.sendBytes = blockBytes;
      s.recvBytes = s.bytes;
      break;
    default:  // alltoall; reduce_scatter_block (whose in-place form needs the whole vector)
      s.sendBytes = s.recvBytes = s.bytes;
      break;
  }
  return s;
}

struct Call {
  Coll coll;
  bool inPlace;
  MPI_Datatype type;
  MPI_Op op;
  int root;
  int rank;
  int count;
  const int* counts;  // per-rank counts: those of the Shape
  const int* displs;
  bool nonblocking;  // MPI_I<coll> + MPI_Wait in place of MPI_<coll>
  bool library;      // PMPI_<coll>: the MPI library's own call, past any interposer (--paired)
};

// The name of the MPI call, "allreduce" or "iallreduce".
std::string callName(Coll c, bool nonblocking) {
  return std::string(nonblocking ? "i" : "") + collInfo(c).name;
}

// The four entry points of a collective: MPI_<Name>, MPI_I<name>, and their PMPI_ names.
#define OVERPASS_BENCH_FORMS(Name, IName) MPI_##Name, MPI_##IName, PMPI_##Name, PMPI_##IName

// Starts the call under test: MPI_<coll> where req is null (done on return), else MPI_I<coll>,
// which sets *req; their PMPI_ names where k.library. Buffers that MPI ignores on this rank are
// passed as NULL.
void post(const Call& k, void* send, void* recv, MPI_Request* req) {
  // The forms take the same arguments; the nonblocking one a request after the communicator.
  auto call = [&k, req](auto blocking, auto nonblocking, auto libraryBlocking,
                        auto libraryNonblocking, auto... args) {
    if (req)
      (k.library ? libraryNonblocking : nonblocking)(args..., kComm, req);
    else
      (k.library ? libraryBlocking : blocking)(args..., kComm);
  };
  const bool isRoot = k.rank == k.root;
  void* const sendOrInPlace = k.inPlace ? MPI_IN_PLACE : send;
  void* const rootSendOrInPlace = k.inPlace && isRoot ? MPI_IN_PLACE : send;
  void* const rootRecvOrInPlace = k.inPlace && isRoot ? MPI_IN_PLACE : recv;
  void* const sendAtRoot = isRoot ? send : nullptr;
  void* const recvAtRoot = isRoot ? recv : nullptr;
  switch (k.coll) {
    case Coll::kAllreduce:
      call(OVERPASS_BENCH_FORMS(Allreduce, Iallreduce), sendOrInPlace, recv, k.count, k.type, k.op);
      break;
    case Coll::kBcast:
      call(OVERPASS_BENCH_FORMS(Bcast, Ibcast), recv, k.count, k.type, k.root);
      break;
    case Coll::kReduce:
      call(OVERPASS_BENCH_FORMS(Reduce, Ireduce), rootSendOrInPlace, recvAtRoot, k.count, k.type,
           k.op, k.root);
      break;
    case Coll::kScatter:
      call(OVERPASS_BENCH_FORMS(Scatter, Iscatter), sendAtRoot, k.count, k.type, rootRecvOrInPlace,
           k.count, k.type, k.root);
      break;
    case Coll::kGather:
      call(OVERPASS_BENCH_FORMS(Gather, Igather), rootSendOrInPlace, k.count, k.type, recvAtRoot,
           k.count, k.type, k.root);
      break;
    case Coll::kAllgather:
      call(OVERPASS_BENCH_FORMS(Allgather, Iallgather), sendOrInPlace, k.count, k.type, recv,
           k.count, k.type);
      break;
    case Coll::kAlltoall:
      call(OVERPASS_BENCH_FORMS(Alltoall, Ialltoall), sendOrInPlace, k.count, k.type, recv, k.count,
           k.type);
      break;
    case Coll::kReduceScatterBlock:
      call(OVERPASS_BENCH_FORMS(Reduce_scatter_block, Ireduce_scatter_block), sendOrInPlace, recv,
           k.count, k.type, k.op);
      break;
    case Coll::kBarrier:
      call(OVERPASS_BENCH_FORMS(Barrier, Ibarrier));
      break;
    case Coll::kAllgatherv:
      call(OVERPASS_BENCH_FORMS(Allgatherv, Iallgatherv), sendOrInPlace, k.counts[k.rank], k.type,
           recv, k.counts, k.displs, k.type);
      break;
    case Coll::kAlltoallv:
      call(OVERPASS_BENCH_FORMS(Alltoallv, Ialltoallv), sendOrInPlace, k.counts, k.displs, k.type,
           recv, k.counts, k.displs, k.type);
      break;
    case Coll::kGatherv:
      call(OVERPASS_BENCH_FORMS(Gatherv, Igatherv), rootSendOrInPlace, k.counts[k.rank], k.type,
           recvAtRoot, k.counts, k.displs, k.type, k.root);
      break;
    case Coll::kScatterv:
      call(OVERPASS_BENCH_FORMS(Scatterv, Iscatterv), sendAtRoot, k.counts, k.displs, k.type,
           rootRecvOrInPlace, k.counts[k.rank], k.type, k.root);
      break;
    case Coll::kReduceScatter:
      call(OVERPASS_BENCH_FORMS(Reduce_scatter, Ireduce_scatter), sendOrInPlace, recv, k.counts,
           k.type, k.op);
      break;
    case Coll::kScan:
      call(OVERPASS_BENCH_FORMS(Scan, Iscan), sendOrInPlace, recv, k.count, k.type, k.op);
      break;
    case Coll::kExscan:
      call(OVERPASS_BENCH_FORMS(Exscan, Iexscan), sendOrInPlace, recv, k.count, k.type, k.op);
      break;
  }
}
#undef OVERPASS_BENCH_FORMS

// One whole call under test: MPI_<coll>, or MPI_I<coll> and MPI_Wait.
void invoke(const Call& k, void* send, void* recv) {
  if (!k.nonblocking) return post(k, send, recv, nullptr);
  MPI_Request req = MPI_REQUEST_NULL;
  post(k, send, recv, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

// ---------------------------------------------------------------------------------------------
// Memory: where the buffers under test live. The seam for device memory: the benchmark touches
// its buffers only through this interface (staging on the host for the checks).

class Memory {
 public:
  virtual ~Memory() = default;
  virtual void* allocate(std::size_t bytes) = 0;  // nullptr on failure
  virtual void release(void* p) = 0;
  virtual void copyIn(void* dst, const void* hostSrc, std::size_t bytes) = 0;
  virtual void copyOut(void* hostDst, const void* src, std::size_t bytes) = 0;
};

class HostMemory final : public Memory {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    return posix_memalign(&p, kAlign, std::max(bytes, kAlign)) == 0 ? p : nullptr;
  }
  void release(void* p) override { std::free(p); }
  void copyIn(void* dst, const void* hostSrc, std::size_t bytes) override {
    std::memcpy(dst, hostSrc, bytes);
  }
  void copyOut(void* hostDst, const void* src, std::size_t bytes) override {
    std::memcpy(hostDst, src, bytes);
  }
};

// The simulated device of gpu/sim_device.h (for runs with OVERPASS_SIM_DEVICE=1 without a GPU):
// memory the host cannot touch, filled and checked through its alias. Never freed.
class SimulatedDeviceMemory final : public Memory {
 public:
  void* allocate(std::size_t bytes) override { return overpass_sim_device_alloc(bytes); }
  void release(void*) override {}
  void copyIn(void* dst, const void* hostSrc, std::size_t bytes) override {
    std::memcpy(overpass_sim_alias(dst), hostSrc, bytes);
  }
  void copyOut(void* hostDst, const void* src, std::size_t bytes) override {
    std::memcpy(hostDst, overpass_sim_alias(src), bytes);
  }
};

#ifdef OVERPASS_BENCH_CUDA
// Device memory for a CUDA-aware MPI library: one device per node-local rank.
class CudaMemory final : public Memory {
 public:
  CudaMemory() {
    MPI_Comm node;
    MPI_Comm_split_type(kComm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int localRank = 0;
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_free(&node);
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    if (devices == 0) fail("--memory cuda: no CUDA device");
    check(cudaSetDevice(localRank % devices), "cudaSetDevice");
  }
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    return cudaMalloc(&p, std::max(bytes, kAlign)) == cudaSuccess ? p : nullptr;
  }
  void release(void* p) override { cudaFree(p); }
  void copyIn(void* dst, const void* hostSrc, std::size_t bytes) override {
    check(cudaMemcpy(dst, hostSrc, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void copyOut(void* hostDst, const void* src, std::size_t bytes) override {
    check(cudaMemcpy(hostDst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
      fail((std::string("--memory cuda: ") + what + ": " + cudaGetErrorString(e)).c_str());
  }
  [[noreturn]] static void fail(const char* what) {
    std::fprintf(stderr, "overpass-bench: %s\n", what);
    MPI_Abort(kComm, kExitUsage);
    std::abort();
  }
};
#endif

// Empty, with *error set, when the kind is unknown or not compiled in.
std::unique_ptr<Memory> makeMemory(std::string_view kind, std::string* error) {
  if (kind == "host") return std::make_unique<HostMemory>();
  if (kind == "sim") return std::make_unique<SimulatedDeviceMemory>();
#ifdef OVERPASS_BENCH_CUDA
  if (kind == "cuda") return std::make_unique<CudaMemory>();
#else
  if (kind == "cuda") {
    *error = "--memory cuda: this build has no CUDA support (the CUDA toolkit was not found)";
    return nullptr;
  }
#endif
  *error = "--memory: unknown kind '" + std::string(kind) + "'";
  return nullptr;
}

// The bytes a buffer of `spanBytes` takes in the pool: whole aligned blocks, at least one.
std::size_t slotBytes(std::size_t spanBytes) {
  return (std::max<std::size_t>(spanBytes, 1) + kAlign - 1) / kAlign * kAlign;
}

// A send and a receive region. Hot: every call uses offset 0. Cold: each call takes the next
// slot of a cursor that walks the whole pool (both regions together exceed twice the
// last-level cache), across sizes and collectives, so no call finds its buffers in the cache.
class BufferPool {
 public:
  struct Set {
    void* send;
    void* recv;
  };

  BufferPool(Memory& memory, std::size_t capacity, bool cold)
      : memory_(memory), capacity_(capacity), cold_(cold) {
    send_ = static_cast<char*>(memory_.allocate(capacity_));
    recv_ = static_cast<char*>(memory_.allocate(capacity_));
  }
  ~BufferPool() {
    if (send_) memory_.release(send_);
    if (recv_) memory_.release(recv_);
  }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  bool ok() const { return send_ && recv_; }
  std::size_t capacity() const { return capacity_; }

  // Fills both regions with valid small values so timed calls never meet NaN or denormals.
  template <typename T>
  void fillQuiet() {
    const std::size_t chunkBytes = std::min(capacity_, kFillChunkBytes);
    std::vector<T> chunk(chunkBytes / sizeof(T));
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<T>(1 + i % 5);
    for (char* region : {send_, recv_}) {
      for (std::size_t off = 0; off < capacity_; off += chunkBytes)
        memory_.copyIn(region + off, chunk.data(), std::min(chunkBytes, capacity_ - off));
    }
  }

  Set next(std::size_t spanBytes) {
    if (!cold_) return {send_, recv_};
    const std::size_t stride = slotBytes(spanBytes);
    if (cursor_ + stride > capacity_) cursor_ = 0;
    const Set s{send_ + cursor_, recv_ + cursor_};
    cursor_ += stride;
    return s;
  }

 private:
  Memory& memory_;
  std::size_t capacity_;
  bool cold_;
  char* send_ = nullptr;
  char* recv_ = nullptr;
  std::size_t cursor_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Check values. Every value is a small integer, exact in every type, and so is every partial
// result in any order of reduction:
// - data movement, min and max: values in [-R, R] (signed) or [0, R], R = min(2^20, limit);
// - sum: the same with R = min(2^20, limit / np), so |sum| <= limit;
// - prod: values in {1, 2} (times -1 or 1 for signed types); at each index only
//   `activeRanks` = min(np, log2(limit)) ranks may contribute a 2 (the others contribute +-1), so
//   |product| <= 2^activeRanks <= limit. With more ranks than that (e.g. > 6 ranks for int8), a
//   prod check covers only that many factors of 2 per element, rotating over the ranks by index.
// `limit` is one below the type's maximum, which is the receive-buffer sentinel.

std::uint64_t splitMix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct ValueModel {
  int np = 1;
  bool isSigned = true;
  bool prod = false;
  int activeRanks = 1;  // ranks that may contribute a non-identity value at one index
  std::int64_t range = 1;

  // The value of element idx of rank's input vector in the call identified by key.
  std::int64_t value(std::uint64_t key, int rank, std::size_t idx) const {
    const std::uint64_t h = splitMix64(key ^ splitMix64((std::uint64_t(rank) << 40) + idx));
    const bool active =
        activeRanks >= np || static_cast<int>((idx + static_cast<std::size_t>(rank)) %
                                              static_cast<std::size_t>(np)) < activeRanks;
    if (prod) {
      const std::int64_t magnitude = active && (h & 2) ? 2 : 1;
      return isSigned && (h & 1) ? -magnitude : magnitude;
    }
    if (!active) return 0;
    const std::uint64_t r = static_cast<std::uint64_t>(range);
    if (isSigned) return static_cast<std::int64_t>((h >> 2) % (2 * r + 1)) - range;
    return static_cast<std::int64_t>((h >> 2) % (r + 1));
  }
};

ValueModel makeValueModel(const TypeInfo& t, std::optional<ReduceOp> op, int np) {
  ValueModel m;
  m.np = np;
  m.isSigned = t.isSigned;
  m.activeRanks = np;
  m.range = std::min(kMaxRange, t.exactLimit);
  if (op == ReduceOp::kSum) {
    m.activeRanks = static_cast<int>(std::min<std::int64_t>(np, t.exactLimit));
    m.range = std::max<std::int64_t>(1, std::min(kMaxRange, t.exactLimit / m.activeRanks));
  } else if (op == ReduceOp::kProd) {
    int log2Limit = 0;
    while (log2Limit < 62 && (std::int64_t{2} << log2Limit) <= t.exactLimit) ++log2Limit;
    m.prod = true;
    m.activeRanks = std::min(np, log2Limit);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Options.

struct Options {
  std::string minBytesText = "8";
  std::string maxBytesText = "32M";
  std::size_t minBytes = 8;
  std::size_t maxBytes = 32 * kKiB * kKiB;
  std::size_t stepFactor = 2;
  int iters = 20;
  int warmup = 5;
  double timeBudget = 0;  // --time: seconds per point (0: -n iterations per batch)
  int batches = 1;
  std::string datatype = "float";
  std::string op = "sum";
  int root = 0;
  int check = 1;
  std::string coll = "allreduce";
  std::string counts = "uniform";  // --counts: the pattern of the per-rank counts
  int inPlace = 0;
  bool cold = false;
  std::string memory = "host";
  std::string jsonPath;
  std::string netdev;          // --netdev: count the bytes this network interface moves per call
  int nonblocking = 0;         // --nonblocking: 0 MPI_<coll>, 1 MPI_I<coll> + MPI_Wait, 2 both
  bool overlap = false;        // --overlap: MPI_I<coll>, a computation, MPI_Wait
  int testsDuringCompute = 0;  // --test-during-compute: MPI_Test calls within the computation
  int burst = 0;               // --burst: calls posted before one MPI_Waitall (0: not)
  bool syncEach = false;       // --sync-each: a PMPI_Barrier before every timed call
  bool fresh = false;          // --fresh: each rank rewrites its input before every timed call
  bool paired = false;         // --paired: batches alternating with PMPI_<coll>'s
  bool lineRtt = false;        // --line-rtt: the machine's state before and after each row
};

std::size_t lastLevelCacheBytes() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
  std::string text;
  if (in >> text) {
    if (const auto v = tools::parseSizeText(text); v && *v > 0) return *v;
  }
  return kDefaultLlcBytes;
}

std::optional<std::vector<Coll>> parseColls(const std::string& text) {
  std::vector<Coll> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    start = comma + 1;
    if (name == "all") {
      for (const CollInfo& c : kColls) out.push_back(c.coll);
      continue;
    }
    const auto* it = std::find_if(std::begin(kColls), std::end(kColls),
                                  [&](const CollInfo& c) { return name == c.name; });
    if (it == std::end(kColls)) return std::nullopt;
    out.push_back(it->coll);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The benchmark's own gathers go point to point, so that they do not depend on the collectives of
// the library under test (Open MPI 4.1's coll han returns no data from MPI_Gather when ranks are
// placed round-robin over the hosts).

constexpr int kBookkeepingTag = 0x0b0b;

// Rank 0 receives `count` elements of `type` from every rank into `all` (rank order).
void gatherToRoot(const void* local, int count, MPI_Datatype type, void* all, int rank, int np) {
  if (rank != 0) {
    PMPI_Send(local, count, type, 0, kBookkeepingTag, kComm);
    return;
  }
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  auto* out = static_cast<char*>(all);
  std::memcpy(out, local, static_cast<std::size_t>(count) * static_cast<std::size_t>(extent));
  for (int r = 1; r < np; ++r)
    PMPI_Recv(out + static_cast<std::size_t>(r) * count * extent, count, type, r, kBookkeepingTag,
              kComm, MPI_STATUS_IGNORE);
}

// Every rank receives its own element of `all` (rank 0's array, one int per rank).
int scatterFromRoot(const std::vector<int>& all, int rank, int np) {
  if (rank != 0) {
    int mine = 0;
    PMPI_Recv(&mine, 1, MPI_INT, 0, kBookkeepingTag, kComm, MPI_STATUS_IGNORE);
    return mine;
  }
  for (int r = 1; r < np; ++r) PMPI_Send(&all[r], 1, MPI_INT, r, kBookkeepingTag, kComm);
  return all[0];
}

// ---------------------------------------------------------------------------------------------
// Link counters (--netdev): the bytes and packets a network interface of this rank's network
// namespace has moved, from /proc/net/dev (per namespace, unlike /sys/class/net). One rank per
// host reads them; the hosts are told apart by MPI_Get_processor_name.

struct LinkCounters {
  double rxBytes = 0, rxPackets = 0, txBytes = 0, txPackets = 0;
  LinkCounters operator-(const LinkCounters& o) const {
    return {rxBytes - o.rxBytes, rxPackets - o.rxPackets, txBytes - o.txBytes,
            txPackets - o.txPackets};
  }
};

std::optional<LinkCounters> readLink(const std::string& dev) {
  std::ifstream in("/proc/net/dev");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t first = line.find_first_not_of(' ');
    if (line.compare(first, colon - first, dev) != 0 || colon - first != dev.size()) continue;
    std::istringstream fields(line.substr(colon + 1));
    double v[10] = {};
    for (double& x : v) fields >> x;   // rx: bytes packets errs drop fifo frame compressed
    if (!fields) return std::nullopt;  //     multicast; tx: bytes packets ...
    return LinkCounters{v[0], v[1], v[8], v[9]};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The benchmark.

// How the calls of a row are made and timed.
enum class Form {
  kBlocking,     // MPI_<coll>
  kNonblocking,  // MPI_I<coll> + MPI_Wait
  kOverlap,      // MPI_I<coll>, a computation of about the time of the call, MPI_Wait (--overlap)
  kBurst,        // --burst N: N calls of MPI_I<coll> on their own buffers, one MPI_Waitall
};

constexpr const char* kFormNames[] = {"blocking", "nonblocking", "overlap", "burst"};

struct Cell {
  bool ran = false;
  double timeUs = 0;  // median over ranks of the per-rank mean
  double minUs = 0;
  double maxUs = 0;
  // The slowest rank's time per call in each batch, median over the batches: what the program
  // waits for, with a preempted batch outvoted by the others. --burst: per burst of calls.
  double slowestUs = 0;
  int iters = 0;  // timed calls (bursts) per batch
  double algbw = 0;
  double busbw = 0;
  std::int64_t wrong = 0;
  // --netdev: per host (in host order), the counters' growth per timed call, the barriers that
  // start the batches subtracted.
  std::vector<LinkCounters> link;
  // --overlap, in the OSU micro-benchmarks' terms, each the slowest rank's in each batch, median
  // over the batches: t_pure (MPI_I<coll> + MPI_Wait alone), t_compute (the computation between
  // them, without the MPI_Test calls of --test-during-compute); t_total (post, computation,
  // MPI_Wait) is slowestUs. overlapPct = max(0, 100 (1 - (t_total - t_compute) / t_pure)).
  double pureUs = 0;
  double computeUs = 0;
  double overlapPct = 0;
  // --sync-each: the median and 99th percentile over the calls of each call's slowest rank.
  double callP50Us = 0, callP99Us = 0;
  // --paired: the MPI library's own call (PMPI_<coll>) timed in batches alternating with the
  // call under test: its slowestUs, callP50Us and callP99Us, and per pair of batches the ratio
  // of the library's slowest rank's time to the call under test's, median over the pairs.
  double librarySlowestUs = 0;
  double libraryP50Us = 0, libraryP99Us = 0;
  double pairedRatio = 0;
};

// One rank's timed calls: per batch the seconds per call, in all and in the part the timed body
// reports (--overlap: the computation).
struct Timing {
  int iters = 0;  // calls per batch
  std::vector<double> perCall;
  std::vector<double> partPerCall;
  double mean = 0;  // seconds per call over all batches
  // --sync-each, at rank 0: over every timed call, the median and 99th percentile of the slowest
  // rank's time of that call (seconds).
  double callP50 = 0, callP99 = 0;
  std::vector<LinkCounters> link;  // --netdev, at rank 0: per host, per call
};

// A column of the table: its title and unit, and the width of its values.
struct Column {
  const char* title;
  const char* unit;
  int width;
};

class Bench {
 public:
  Bench(const Options& o, const TypeInfo& type, const OpInfo& op, CountPattern pattern,
        Memory& memory, BufferPool& pool, std::size_t stagingBytes, int rank, int np)
      : o_(o),
        type_(type),
        op_(op),
        pattern_(pattern),
        memory_(memory),
        pool_(pool),
        rank_(rank),
        np_(np),
        moveModel_(makeValueModel(type, std::nullopt, np)),
        reduceModel_(makeValueModel(type, op.op, np)),
        hostSend_(stagingBytes + sizeof(double)),
        hostRecv_(stagingBytes + sizeof(double)),
        probe_(o.lineRtt ? std::make_optional<tools::LineProbe>(kComm) : std::nullopt) {}

  // Runs every selected collective; returns the exit status on rank 0.
  int run(const std::vector<Coll>& colls, const std::vector<std::size_t>& sizes);

 private:
  Cell measure(Form form, const Call& k, const Shape& s);
  Cell measureCalls(const Call& k, const Shape& s);
  Cell measureOverlap(const Call& k, const Shape& s);
  Cell measureBurst(const Call& k, const Shape& s);
  template <typename Body>
  Timing timeCalls(Body&& body);
  template <typename Body>
  std::vector<Timing> timeSides(int sides, Body&& body, const std::function<void()>& before = {});
  template <typename Body>
  int itersPerBatch(Body& body);
  Cell summarize(Coll coll, double dataBytes, const Timing& t, std::int64_t wrong) const;
  void invokeBurst(const Call& k, const BufferPool::Set& first, std::size_t stride, int calls);
  void rewriteInput(const Call& k, const Shape& s, const BufferPool::Set& b) const;
  double computeWithTests(std::int64_t steps, MPI_Request* req) const;
  std::int64_t check(const Call& k, const Shape& s, int calls);
  template <typename T>
  std::int64_t checkCalls(const Call& k, const Shape& s, int calls);
  std::vector<Column> columns() const;
  void printHeader(const std::vector<std::size_t>& sizes) const;
  void printRow(const Call& k, const Shape& s, const std::vector<Cell>& cells) const;
  void record(Form form, const Call& k, const Shape& s, const Cell& c,
              const std::optional<tools::LineProbe::Reading>& stateBefore,
              const std::optional<tools::LineProbe::Reading>& stateAfter);
  bool setUpLink();
  LinkCounters linkNow() const;
  std::vector<LinkCounters> gatherLink(const LinkCounters& perCall) const;

  const Options& o_;
  const TypeInfo& type_;
  const OpInfo& op_;
  const CountPattern pattern_;
  Memory& memory_;
  BufferPool& pool_;
  const int rank_;
  const int np_;
  const ValueModel moveModel_;
  const ValueModel reduceModel_;
  std::vector<unsigned char> hostSend_;  // host staging for the checks, persistent
  std::vector<unsigned char> hostRecv_;
  std::vector<bool> modes_;            // the in-place flags of the columns
  std::vector<Form> forms_;            // the rows of each collective and size
  std::vector<MPI_Request> requests_;  // --burst
  nlohmann::json records_ = nlohmann::json::array();
  std::int64_t totalWrong_ = 0;
  double busbwSum_ = 0;
  int busbwCount_ = 0;
  // --netdev: whether this rank reads its host's counters, the hosts' names (rank 0), and one
  // PMPI_Barrier's growth of the counters on this host (measured at the start).
  bool linkReader_ = false;
  std::vector<std::string> hosts_;
  LinkCounters barrierLink_;
  // --line-rtt: the machine's state before and after each row (tools/line_probe.h).
  std::optional<tools::LineProbe> probe_;
};

// `calls` calls on fresh data, each with its own buffers and values (calls > 1: the nonblocking
// form, all posted before one MPI_Waitall, as --burst times them), then the exact comparison of
// each. Returns this rank's wrong elements: those of its significant receive buffers, plus any
// element of its send buffers that changed.
template <typename T>
std::int64_t Bench::checkCalls(const Call& k, const Shape& s, int calls) {
  if (k.coll == Coll::kBarrier) return 0;  // nothing to compare
  const CollInfo& info = collInfo(k.coll);
  const ValueModel& model = info.reduces ? reduceModel_ : moveModel_;
  const std::uint64_t firstKey = splitMix64(
      splitMix64(splitMix64(static_cast<std::uint64_t>(k.coll) * 2 + k.inPlace) ^ s.bytes) ^
      static_cast<std::uint64_t>(o_.warmup + o_.iters));
  const std::size_t stride = slotBytes(std::max(s.sendBytes, s.recvBytes));
  const BufferPool::Set first = pool_.next(stride * static_cast<std::size_t>(calls));
  // The call being staged or verified: its buffers and the key of its values.
  BufferPool::Set set = first;
  std::uint64_t key = firstKey;
  auto select = [&](int call) {
    const std::size_t offset = stride * static_cast<std::size_t>(call);
    set = {static_cast<char*>(first.send) + offset, static_cast<char*>(first.recv) + offset};
    key = call == 0 ? firstKey : splitMix64(firstKey + static_cast<std::uint64_t>(call));
  };
  T* hs = reinterpret_cast<T*>(hostSend_.data());
  T* hr = reinterpret_cast<T*>(hostRecv_.data());
  const std::size_t c = s.block;
  const std::size_t n = static_cast<std::size_t>(np_);
  const int me = rank_;
  const int root = k.root;
  const bool isRoot = me == root;
  const T sentinel = std::numeric_limits<T>::max();

  auto data = [&](int r, std::size_t i) { return model.value(key, r, i); };
  auto reduced = [&](std::size_t i) {
    std::int64_t acc = data(0, i);
    for (int r = 1; r < np_; ++r) acc = combine(op_.op, acc, data(r, i));
    return acc;
  };
  auto mine = [&](std::size_t i) { return static_cast<T>(data(me, i)); };
  auto blank = [&](std::size_t) { return sentinel; };
  std::size_t sendElems = 0;  // every send buffer holds this rank's own values, mine()
  auto stageSend = [&](std::size_t elems) {
    for (std::size_t i = 0; i < elems; ++i) hs[i] = mine(i);
    memory_.copyIn(set.send, hs, elems * sizeof(T));
    sendElems = elems;
  };
  auto stageRecv = [&](std::size_t elems, auto valueAt) {
    for (std::size_t i = 0; i < elems; ++i) hr[i] = valueAt(i);
    memory_.copyIn(set.recv, hr, elems * sizeof(T));
  };
  auto verifyRecv = [&](std::size_t elems, auto expectedAt) {
    memory_.copyOut(hr, set.recv, elems * sizeof(T));
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < elems; ++i) wrong += hr[i] != static_cast<T>(expectedAt(i)) ? 1 : 0;
    return wrong;
  };
  // Per-rank counts: the elements of all ranks' blocks, rank r's at displs[r], and the rank whose
  // block holds element i (the last with displs[r] <= i: a rank without elements shares its
  // displacement with the next one).
  const std::size_t all = s.counts.empty() ? 0
                                           : static_cast<std::size_t>(s.displs.back()) +
                                                 static_cast<std::size_t>(s.counts.back());
  auto ownerOf = [&](std::size_t i) {
    return static_cast<int>(
               std::upper_bound(s.displs.begin(), s.displs.end(), static_cast<long long>(i)) -
               s.displs.begin()) -
           1;
  };
  auto offsetIn = [&](std::size_t i) { return i - static_cast<std::size_t>(s.displs[ownerOf(i)]); };
  const std::size_t meCount = s.counts.empty() ? 0 : static_cast<std::size_t>(s.counts[me]);
  const std::size_t meDispl = s.displs.empty() ? 0 : static_cast<std::size_t>(s.displs[me]);
  // The prefix of ranks 0..last (scan: last = me; exscan: me - 1) at index i.
  auto prefix = [&](int last, std::size_t i) {
    std::int64_t acc = data(0, i);
    for (int r = 1; r <= last; ++r) acc = combine(op_.op, acc, data(r, i));
    return acc;
  };

  auto stage = [&] {
    switch (k.coll) {
      case Coll::kAllreduce:
      case Coll::kScan:
      case Coll::kExscan:
      case Coll::kAlltoall:
      case Coll::kReduceScatterBlock: {
        const bool blocks = k.coll == Coll::kAlltoall || k.coll == Coll::kReduceScatterBlock;
        const std::size_t in = blocks ? c * n : c;
        const std::size_t out = k.coll == Coll::kAlltoall ? c * n : c;
        if (k.inPlace) {
          stageRecv(in, mine);
        } else {
          stageSend(in);
          stageRecv(out, blank);
        }
        break;
      }
      case Coll::kBcast:
        stageRecv(c, [&](std::size_t i) { return isRoot ? mine(i) : sentinel; });
        break;
      case Coll::kReduce:
        if (k.inPlace && isRoot) {
          stageRecv(c, mine);
        } else {
          stageSend(c);
          if (isRoot) stageRecv(c, blank);
        }
        break;
      case Coll::kGather:
      case Coll::kAllgather: {
        const bool significant = k.coll == Coll::kAllgather || isRoot;
        if (k.inPlace && significant) {
          stageRecv(c * n, [&](std::size_t i) {
            return i / c == static_cast<std::size_t>(me) ? mine(i % c) : sentinel;
          });
        } else {
          stageSend(c);
          if (significant) stageRecv(c * n, blank);
        }
        break;
      }
      case Coll::kScatter:
        if (isRoot) stageSend(c * n);
        if (!(k.inPlace && isRoot)) stageRecv(c, blank);
        break;
      case Coll::kBarrier:
        break;
      case Coll::kAllgatherv:
      case Coll::kGatherv: {
        const bool significant = k.coll == Coll::kAllgatherv || isRoot;
        if (k.inPlace && significant) {
          stageRecv(all, [&](std::size_t i) {
            return i >= meDispl && i < meDispl + meCount ? mine(i - meDispl) : sentinel;
          });
        } else {
          stageSend(meCount);
          if (significant) stageRecv(all, blank);
        }
        break;
      }
      case Coll::kScatterv:
        if (isRoot) stageSend(all);
        if (!(k.inPlace && isRoot)) stageRecv(meCount, blank);
        break;
      case Coll::kAlltoallv:  // this rank's row: what it sends, and as long what it receives
      case Coll::kReduceScatter:
        if (k.inPlace) {
          stageRecv(all, mine);
        } else {
          stageSend(all);
          stageRecv(k.coll == Coll::kAlltoallv ? all : meCount, blank);
        }
        break;
    }
  };

  const std::size_t meBlock = static_cast<std::size_t>(me) * c;
  auto verify = [&] {
    std::int64_t wrong = 0;
    switch (k.coll) {
      case Coll::kAllreduce:
        wrong += verifyRecv(c, reduced);
        break;
      case Coll::kBcast:
        wrong += verifyRecv(c, [&](std::size_t i) { return data(root, i); });
        break;
      case Coll::kReduce:
        if (isRoot) wrong += verifyRecv(c, reduced);
        break;
      case Coll::kGather:
      case Coll::kAllgather:
        if (k.coll == Coll::kAllgather || isRoot)
          wrong += verifyRecv(c * n, [&](std::size_t i) { return data(int(i / c), i % c); });
        break;
      case Coll::kScatter:
        if (!(k.inPlace && isRoot))
          wrong += verifyRecv(c, [&](std::size_t i) { return data(root, meBlock + i); });
        break;
      case Coll::kAlltoall:
        wrong +=
            verifyRecv(c * n, [&](std::size_t i) { return data(int(i / c), meBlock + i % c); });
        break;
      case Coll::kReduceScatterBlock:
        wrong += verifyRecv(c, [&](std::size_t i) { return reduced(meBlock + i); });
        break;
      case Coll::kBarrier:
        break;
      case Coll::kAllgatherv:
      case Coll::kGatherv:
        if (k.coll == Coll::kAllgatherv || isRoot)
          wrong += verifyRecv(all, [&](std::size_t i) { return data(ownerOf(i), offsetIn(i)); });
        break;
      case Coll::kScatterv:
        if (!(k.inPlace && isRoot))
          wrong += verifyRecv(meCount, [&](std::size_t i) { return data(root, meDispl + i); });
        break;
      case Coll::kAlltoallv: {
        // From rank j, at this rank's displacement for j: j's elements at j's displacement for this
        // rank (the sum of what j sends the ranks before it).
        const Pattern pattern = makePattern(pattern_, k.coll, root, np_);
        std::vector<std::size_t> fromDispl(n, 0);
        for (int j = 0; j < np_; ++j)
          for (int r = 0; r < me; ++r) fromDispl[j] += c * pattern.pair(j, r);
        wrong += verifyRecv(all, [&](std::size_t i) {
          const int j = ownerOf(i);
          return data(j, fromDispl[j] + offsetIn(i));
        });
        break;
      }
      case Coll::kReduceScatter:
        wrong += verifyRecv(meCount, [&](std::size_t i) { return reduced(meDispl + i); });
        break;
      case Coll::kScan:
        wrong += verifyRecv(c, [&](std::size_t i) { return prefix(me, i); });
        break;
      case Coll::kExscan:  // rank 0's receive buffer is undefined
        if (me > 0) wrong += verifyRecv(c, [&](std::size_t i) { return prefix(me - 1, i); });
        break;
    }
    if (sendElems > 0) {  // the send buffer is const to MPI
      memory_.copyOut(hr, set.send, sendElems * sizeof(T));
      for (std::size_t i = 0; i < sendElems; ++i) wrong += hr[i] != mine(i) ? 1 : 0;
    }
    return wrong;
  };

  for (int call = 0; call < calls; ++call) {
    select(call);
    stage();
    if (o_.fresh) rewriteInput(k, s, set);  // checked as it is timed
  }
  invokeBurst(k, first, stride, calls);
  std::int64_t wrong = 0;
  for (int call = 0; call < calls; ++call) {
    select(call);
    wrong += verify();
  }
  return wrong;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

// The q-th quantile (0 < q <= 1) by the nearest rank: the smallest value with a share q of the
// values at or below it.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto at = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(at, 1, v.size()) - 1];
}

// The largest value of each element over the ranks, on every rank (per batch: the slowest rank's).
std::vector<double> maxOverRanks(std::vector<double> v) {
  PMPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, kComm);
  return v;
}

// The computation of --overlap: `steps` dependent floating-point multiply-adds, a chain the
// compiler can neither drop nor vectorize, in registers (no memory traffic to disturb the call).
volatile double spinSink = 1.0;

void spin(std::int64_t steps) {
  double x = spinSink;
  for (std::int64_t i = 0; i < steps; ++i) x = x * 0.9999999 + 1e-7;  // tends to 1: no denormals
  spinSink = x;
}

double timeSpin(std::int64_t steps) {
  const double start = MPI_Wtime();
  spin(steps);
  return MPI_Wtime() - start;
}

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The CPU time of `steps` of spin(): unlike the elapsed time, not lengthened where the rank is
// preempted (shared or oversubscribed cores).
double cpuTimeSpin(std::int64_t steps) {
  const double start = threadCpuSeconds();
  spin(steps);
  return threadCpuSeconds() - start;
}

// The steps of spin() that take about `seconds` of this rank's CPU: the rate from runs of growing
// length up to 100 us, then one correction from the median of 5 runs of the estimate.
std::int64_t calibrateSpin(double seconds) {
  constexpr double kRateRun = 1e-4;
  constexpr std::int64_t kMaxSteps = std::int64_t{1} << 40;
  std::int64_t steps = 256;
  double t = cpuTimeSpin(steps);
  while (t < kRateRun && steps < kMaxSteps) t = cpuTimeSpin(steps *= 4);
  auto scaled = [&](std::int64_t n, double took) {
    const double wanted = took > 0 ? static_cast<double>(n) * seconds / took : 1.0;
    return static_cast<std::int64_t>(std::clamp(std::round(wanted), 1.0, double(kMaxSteps)));
  };
  const std::int64_t estimate = scaled(steps, t);
  std::vector<double> runs(5);
  for (double& r : runs) r = cpuTimeSpin(estimate);
  return scaled(estimate, median(runs));
}

// Timed calls per batch: -n, or with --time the count that fills the budget on the slowest rank,
// from a calibration that grows the count until the slowest rank spent a tenth of the budget.
// Every rank takes each decision from the same agreed maximum, so all run the same calls.
template <typename Body>
int Bench::itersPerBatch(Body& body) {
  if (o_.timeBudget <= 0) return o_.iters;
  const double target = o_.timeBudget * kCalibrationShare;
  double calls = 1;
  double perCall = 0;
  for (;;) {
    PMPI_Barrier(kComm);
    const double start = MPI_Wtime();
    for (double i = 0; i < calls; ++i) body();
    double elapsed = MPI_Wtime() - start;
    PMPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, kComm);
    perCall = elapsed / calls;
    if (elapsed >= target || calls >= kMaxItersPerBatch) break;
    // Towards the target in one step where the estimate allows, by 2x-100x.
    const double wanted = elapsed > 0 ? calls * target / elapsed * 1.2 : calls * 100;
    calls = std::min(kMaxItersPerBatch, std::clamp(std::ceil(wanted), 2 * calls, 100 * calls));
  }
  const double perBatch = o_.timeBudget * (1 - kCalibrationShare) / o_.batches / perCall;
  return static_cast<int>(std::clamp(std::round(perBatch), 1.0, kMaxItersPerBatch));
}

// Warm-up calls, then the timed batches of calls of `body`, each batch started by a barrier.
// `body` makes one timed call and returns the seconds of it to report apart (or 0).
template <typename Body>
Timing Bench::timeCalls(Body&& body) {
  return std::move(timeSides(1, [&](int) { return body(); }).front());
}

// timeCalls of `sides` kinds of call at once: body(side) makes one call of that side; the sides'
// batches alternate (batch b runs the sides in order where b is even, in reverse where it is
// odd), so that whatever changes on the machine over the run falls on every side alike.
// `before` (--sync-each only) runs before each timed call's barrier, outside its time.
template <typename Body>
std::vector<Timing> Bench::timeSides(int sides, Body&& body, const std::function<void()>& before) {
  const auto count = static_cast<std::size_t>(sides);
  for (int side = 0; side < sides; ++side)
    for (int i = 0; i < o_.warmup; ++i) body(side);
  // The benchmark's own synchronisation and bookkeeping call the MPI library directly (PMPI), so
  // that preloading an interposer changes only the calls being measured.
  std::vector<Timing> ts(count);
  for (int side = 0; side < sides; ++side) {
    auto one = [&] { return body(side); };
    // --sync-each: the calibration counts the barrier with the call (it fills the budget too).
    auto synced = [&] {
      PMPI_Barrier(kComm);
      return one();
    };
    ts[static_cast<std::size_t>(side)].iters =
        o_.syncEach ? itersPerBatch(synced) : itersPerBatch(one);
  }
  const std::size_t batches = static_cast<std::size_t>(o_.batches);
  // --netdev (one side only): the counters are read once every rank has finished the calls
  // before (a barrier), and again once every rank has finished the timed ones.
  const bool link = !o_.netdev.empty();
  LinkCounters linkBefore;
  if (link) {
    PMPI_Barrier(kComm);
    linkBefore = linkNow();
  }
  std::vector<std::vector<double>> own(count);  // --sync-each: every timed call's time here
  for (std::size_t side = 0; side < count; ++side) {
    ts[side].perCall.resize(batches);
    ts[side].partPerCall.resize(batches);
    if (o_.syncEach) own[side].reserve(static_cast<std::size_t>(ts[side].iters) * batches);
  }
  for (std::size_t batch = 0; batch < batches; ++batch) {
    for (std::size_t turn = 0; turn < count; ++turn) {
      const std::size_t side = batch % 2 ? count - 1 - turn : turn;
      Timing& t = ts[side];
      PMPI_Barrier(kComm);
      double part = 0, elapsed = 0;
      if (o_.syncEach) {
        // Every call starts with all ranks at the line; only the call itself is timed.
        for (int i = 0; i < t.iters; ++i) {
          if (before) before();
          PMPI_Barrier(kComm);
          const double start = MPI_Wtime();
          part += body(static_cast<int>(side));
          own[side].push_back(MPI_Wtime() - start);
          elapsed += own[side].back();
        }
      } else {
        const double start = MPI_Wtime();
        for (int i = 0; i < t.iters; ++i) part += body(static_cast<int>(side));
        elapsed = MPI_Wtime() - start;
      }
      t.perCall[batch] = elapsed / t.iters;
      t.partPerCall[batch] = part / t.iters;
    }
  }
  if (link) {
    const double calls = static_cast<double>(ts[0].iters) * static_cast<double>(batches);
    PMPI_Barrier(kComm);
    const LinkCounters d = linkNow() - linkBefore;
    const double barriers = static_cast<double>(batches) + 1;  // in the window
    const LinkCounters& b = barrierLink_;
    ts[0].link = gatherLink({(d.rxBytes - barriers * b.rxBytes) / calls,
                             (d.rxPackets - barriers * b.rxPackets) / calls,
                             (d.txBytes - barriers * b.txBytes) / calls,
                             (d.txPackets - barriers * b.txPackets) / calls});
  }
  for (std::size_t side = 0; side < count; ++side) {
    Timing& t = ts[side];
    if (o_.syncEach) {
      std::vector<double> slowest(rank_ == 0 ? own[side].size() : 0);
      PMPI_Reduce(own[side].data(), slowest.data(), static_cast<int>(own[side].size()), MPI_DOUBLE,
                  MPI_MAX, 0, kComm);
      t.callP50 = quantile(slowest, 0.5);
      t.callP99 = quantile(slowest, 0.99);
    }
    // Every batch has t.iters calls: the mean per call is the mean of the batches' means.
    t.mean =
        std::accumulate(t.perCall.begin(), t.perCall.end(), 0.0) / static_cast<double>(batches);
  }
  return ts;
}

// The results of every rank at rank 0 (the others return a cell with only `ran` and `iters`):
// `dataBytes` are what one timed call moves (algbw).
Cell Bench::summarize(Coll coll, double dataBytes, const Timing& t, std::int64_t wrong) const {
  // Per rank: mean time, wrong count, time per call of each batch. NaN marks a slot the gather
  // did not fill.
  const std::size_t batches = t.perCall.size();
  const std::size_t slots = 2 + batches;
  std::vector<double> local(slots);
  local[0] = t.mean;
  local[1] = static_cast<double>(wrong);
  std::copy(t.perCall.begin(), t.perCall.end(), local.begin() + 2);
  std::vector<double> all(rank_ == 0 ? slots * static_cast<std::size_t>(np_) : 0,
                          std::numeric_limits<double>::quiet_NaN());
  gatherToRoot(local.data(), static_cast<int>(slots), MPI_DOUBLE, all.data(), rank_, np_);

  Cell cell;
  cell.ran = true;
  cell.iters = t.iters;
  cell.link = t.link;
  cell.callP50Us = t.callP50 * 1e6;
  cell.callP99Us = t.callP99 * 1e6;
  if (rank_ != 0) return cell;
  std::vector<double> means;
  std::vector<double> slowest(batches, 0.0);
  for (int r = 0; r < np_; ++r) {
    const double* row = all.data() + slots * static_cast<std::size_t>(r);
    const double time = row[0];
    const double w = row[1];
    if (std::isnan(time) || std::isnan(w) || w < 0) {
      std::fprintf(stderr, "overpass-bench: %s: no result gathered from rank %d\n",
                   collInfo(coll).name, r);
      cell.wrong += 1;
      continue;
    }
    means.push_back(time * 1e6);
    cell.wrong += static_cast<std::int64_t>(w);
    for (std::size_t batch = 0; batch < batches; ++batch)
      slowest[batch] = std::max(slowest[batch], row[2 + batch] * 1e6);
  }
  if (!means.empty()) {
    cell.timeUs = median(means);
    cell.minUs = *std::min_element(means.begin(), means.end());
    cell.maxUs = *std::max_element(means.begin(), means.end());
    cell.slowestUs = median(slowest);
  }
  cell.algbw = cell.timeUs > 0 ? dataBytes / (cell.timeUs * 1e3) : 0.0;
  cell.busbw = cell.algbw * busFactor(coll, np_);
  return cell;
}

std::int64_t Bench::check(const Call& k, const Shape& s, int calls) {
  if (!o_.check) return 0;
  return withType(type_.type, [&]<typename T>() { return checkCalls<T>(k, s, calls); });
}

// `calls` calls of k on consecutive slots of `stride` bytes from `first`: one whole call where
// calls is 1, else MPI_I<coll> on each slot, then one MPI_Waitall.
// --fresh: this rank's input of the call on `b` written by this rank, as an application's that
// has just computed it (its cache lines modified in this core's cache, no longer shared with the
// peers' from the call before): one store of the value it holds per cache line. The input is in
// the receive buffer for bcast and in place (a rooted collective's at its root only; scatter's
// root keeps its send buffer); bcast's and scatter's other ranks have none.
void Bench::rewriteInput(const Call& k, const Shape& s, const BufferPool::Set& b) const {
  const bool isRoot = k.rank == k.root, rooted = collInfo(k.coll).rooted;
  const bool fromRoot =
      k.coll == Coll::kBcast || k.coll == Coll::kScatter || k.coll == Coll::kScatterv;
  if (fromRoot && !isRoot) return;
  const bool inRecv = k.coll == Coll::kBcast || (k.inPlace && !fromRoot && (!rooted || isRoot));
  auto* input = static_cast<volatile unsigned char*>(inRecv ? b.recv : b.send);
  const std::size_t bytes = inRecv ? s.recvBytes : s.sendBytes;
  for (std::size_t at = 0; at < bytes; at += kCacheLine) input[at] = input[at];
}

void Bench::invokeBurst(const Call& k, const BufferPool::Set& first, std::size_t stride,
                        int calls) {
  if (calls == 1) return invoke(k, first.send, first.recv);
  requests_.assign(static_cast<std::size_t>(calls), MPI_REQUEST_NULL);
  for (int i = 0; i < calls; ++i) {
    const std::size_t offset = stride * static_cast<std::size_t>(i);
    post(k, static_cast<char*>(first.send) + offset, static_cast<char*>(first.recv) + offset,
         &requests_[static_cast<std::size_t>(i)]);
  }
  MPI_Waitall(calls, requests_.data(), MPI_STATUSES_IGNORE);
}

// The computation of --overlap with the call of `req` in flight: `steps` of spin() in
// --test-during-compute + 1 equal parts, an MPI_Test of the request between them. Returns the
// seconds spent computing (the tests excluded).
double Bench::computeWithTests(std::int64_t steps, MPI_Request* req) const {
  const std::int64_t parts = o_.testsDuringCompute + 1;
  double computing = 0;
  for (std::int64_t part = 0; part < parts; ++part) {
    computing += timeSpin(steps * (part + 1) / parts - steps * part / parts);
    if (part + 1 < parts) {
      int done = 0;
      MPI_Test(req, &done, MPI_STATUS_IGNORE);  // a completed request becomes MPI_REQUEST_NULL
    }
  }
  return computing;
}

Cell Bench::measure(Form form, const Call& k, const Shape& s) {
  switch (form) {
    case Form::kBlocking:
    case Form::kNonblocking:
      break;
    case Form::kOverlap:
      return measureOverlap(k, s);
    case Form::kBurst:
      return measureBurst(k, s);
  }
  return measureCalls(k, s);
}

// MPI_<coll>, or MPI_I<coll> + MPI_Wait, timed call after call; --paired: in batches alternating
// with the same calls of the MPI library's own (PMPI_) names.
Cell Bench::measureCalls(const Call& k, const Shape& s) {
  const std::size_t span = std::max(s.sendBytes, s.recvBytes);
  Call library = k;
  library.library = true;
  std::function<void()> before;  // --fresh: this rank's input rewritten before every call
  if (o_.fresh) before = [&] { rewriteInput(k, s, pool_.next(span)); };
  const std::vector<Timing> t = timeSides(
      o_.paired ? 2 : 1,
      [&](int side) {
        const BufferPool::Set b = pool_.next(span);
        invoke(side == 0 ? k : library, b.send, b.recv);
        return 0.0;
      },
      before);
  Cell cell = summarize(k.coll, s.dataBytes, t[0], check(k, s, 1));
  if (!o_.paired) return cell;
  const std::vector<double> ours = maxOverRanks(t[0].perCall);
  const std::vector<double> theirs = maxOverRanks(t[1].perCall);
  std::vector<double> ratios;
  for (std::size_t batch = 0; batch < ours.size(); ++batch)
    if (ours[batch] > 0) ratios.push_back(theirs[batch] / ours[batch]);
  cell.librarySlowestUs = median(theirs) * 1e6;
  cell.libraryP50Us = t[1].callP50 * 1e6;
  cell.libraryP99Us = t[1].callP99 * 1e6;
  cell.pairedRatio = median(ratios);
  return cell;
}

// --overlap (the OSU micro-benchmarks' osu_iallreduce and kin): t_pure, MPI_I<coll> + MPI_Wait
// alone, agreed as the slowest rank's; a computation calibrated on each rank to take t_pure; then
// post, compute (with --test-during-compute K, K MPI_Test calls within), MPI_Wait, timed.
Cell Bench::measureOverlap(const Call& k, const Shape& s) {
  const std::size_t span = std::max(s.sendBytes, s.recvBytes);
  const Timing pure = timeCalls([&] {
    const BufferPool::Set b = pool_.next(span);
    invoke(k, b.send, b.recv);
    return 0.0;
  });
  const double tPure = median(maxOverRanks(pure.perCall));
  const std::int64_t steps = calibrateSpin(tPure);
  const Timing overlapped = timeCalls([&] {
    const BufferPool::Set b = pool_.next(span);
    MPI_Request req = MPI_REQUEST_NULL;
    post(k, b.send, b.recv, &req);
    const double computing = computeWithTests(steps, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return computing;
  });
  const double tCompute = median(maxOverRanks(overlapped.partPerCall));
  Cell cell = summarize(k.coll, s.dataBytes, overlapped, check(k, s, 1));
  cell.pureUs = tPure * 1e6;
  cell.computeUs = tCompute * 1e6;
  const double hidden = tPure > 0 ? 1 - (cell.slowestUs - cell.computeUs) / cell.pureUs : 0;
  cell.overlapPct = std::max(0.0, 100 * hidden);
  return cell;
}

// --burst N: N calls of MPI_I<coll>, each on its own buffers, then one MPI_Waitall; the time is
// the whole burst's.
Cell Bench::measureBurst(const Call& k, const Shape& s) {
  const std::size_t stride = slotBytes(std::max(s.sendBytes, s.recvBytes));
  const Timing t = timeCalls([&] {
    invokeBurst(k, pool_.next(stride * static_cast<std::size_t>(o_.burst)), stride, o_.burst);
    return 0.0;
  });
  return summarize(k.coll, s.dataBytes * o_.burst, t, check(k, s, o_.burst));
}

// --netdev: picks the reader of each host (its lowest rank), checks that every reader sees the
// interface, and measures what one PMPI_Barrier adds to the counters. Collective; false (after
// a message) where some reader does not see the interface.
bool Bench::setUpLink() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(rank_ == 0 ? static_cast<std::size_t>(np_) * MPI_MAX_PROCESSOR_NAME : 0);
  gatherToRoot(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), rank_, np_);
  std::vector<int> readers(rank_ == 0 ? np_ : 0);
  for (int r = 0; r < np_ && rank_ == 0; ++r) {
    const std::string host(names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
    readers[r] = std::find(hosts_.begin(), hosts_.end(), host) == hosts_.end();
    if (readers[r]) hosts_.push_back(host);
  }
  linkReader_ = scatterFromRoot(readers, rank_, np_) != 0;
  int ok = !linkReader_ || readLink(o_.netdev).has_value();
  if (!ok)
    std::fprintf(stderr,
                 "overpass-bench: --netdev %s: no such interface in /proc/net/dev on %s\n"
                 "Run with --help for more information.\n",
                 o_.netdev.c_str(), name);
  std::vector<int> oks(rank_ == 0 ? np_ : 0);
  gatherToRoot(&ok, 1, MPI_INT, oks.data(), rank_, np_);
  const int allOk = std::find(oks.begin(), oks.end(), 0) == oks.end();
  if (!scatterFromRoot(std::vector<int>(rank_ == 0 ? np_ : 0, allOk), rank_, np_)) return false;
  constexpr int kBarriers = 50;
  PMPI_Barrier(kComm);
  const LinkCounters before = linkNow();
  for (int i = 0; i < kBarriers; ++i) PMPI_Barrier(kComm);
  const LinkCounters d = linkNow() - before;
  barrierLink_ = {d.rxBytes / kBarriers, d.rxPackets / kBarriers, d.txBytes / kBarriers,
                  d.txPackets / kBarriers};
  return true;
}

LinkCounters Bench::linkNow() const {
  return linkReader_ ? readLink(o_.netdev).value_or(LinkCounters{}) : LinkCounters{};
}

// The readers' figures at rank 0, in host order (the order of each host's lowest rank).
std::vector<LinkCounters> Bench::gatherLink(const LinkCounters& perCall) const {
  const double local[5] = {linkReader_ ? 1.0 : 0.0, perCall.rxBytes, perCall.rxPackets,
                           perCall.txBytes, perCall.txPackets};
  std::vector<double> all(rank_ == 0 ? 5 * static_cast<std::size_t>(np_) : 0);
  gatherToRoot(local, 5, MPI_DOUBLE, all.data(), rank_, np_);
  std::vector<LinkCounters> out;
  for (std::size_t r = 0; r < all.size(); r += 5)
    if (all[r] == 1.0) out.push_back({all[r + 1], all[r + 2], all[r + 3], all[r + 4]});
  return out;
}

void Bench::printHeader(const std::vector<std::size_t>& sizes) const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string firstLine(version, std::strcspn(version, "\n"));
  const char* preload = std::getenv("LD_PRELOAD");
  std::printf("# overpass-bench: MPI collectives, nccl-tests size semantics\n");
  std::printf("# MPI library : %s\n", firstLine.c_str());
  std::printf("# LD_PRELOAD  : %s\n", preload && *preload ? preload : "(none)");
  std::printf("# np %d  datatype %s  op %s  root %d  iters %d  warmup %d  check %s\n", np_,
              type_.name, op_.name, o_.root, o_.iters, o_.warmup, o_.check ? "on" : "off");
  const char* patternText[] = {
      "every rank's block the same",
      "one rank's block 10x the others' (gatherv, scatterv: the root's next rank; the others: "
      "rank 0, alltoallv: to and from it)",
      "the ranks at odd distance from the root (gatherv, scatterv) or rank 0 have no elements"};
  std::printf(
      "# counts %s: %s; sizes as in the uniform pattern, algbw from the bytes the pattern moves "
      "(allgatherv, alltoallv, gatherv, scatterv, reduce_scatter)\n",
      kPatternNames[static_cast<int>(pattern_)], patternText[static_cast<int>(pattern_)]);
  if (o_.timeBudget > 0)
    std::printf(
        "# timing: about %g s per size and mode, in %d batches (calls per batch from a "
        "calibration; iters above unused)\n",
        o_.timeBudget, o_.batches);
  else if (o_.batches > 1)
    std::printf("# timing: %d batches of %d calls per size and mode\n", o_.batches, o_.iters);
  if (o_.syncEach)
    std::printf(
        "# every timed call after a PMPI_Barrier (--sync-each), its own time only; p50, p99: "
        "over the calls, the median and 99th percentile of each call's slowest rank\n");
  if (o_.fresh)
    std::printf(
        "# fresh: each rank rewrites its input before every timed call, outside its time\n");
  if (o_.paired)
    std::printf(
        "# paired: batches alternating with the MPI library's own call (PMPI_<coll>); library: "
        "its slowest rank's time per call, median over its batches; ratio: library / call under "
        "test per pair of batches, median over the pairs\n");
  if (o_.cold)
    std::printf("# buffers cold: rotating over 2 x %zu MiB per rank  memory %s\n",
                pool_.capacity() / kKiB / kKiB, o_.memory.c_str());
  else
    std::printf("# buffers hot (reused)  memory %s\n", o_.memory.c_str());
  if (probe_ && probe_->ready())
    std::printf(
        "# the machine's state: a cache line's round trip between ranks 0 and 1 and a kernel "
        "round trip before and after each row (--json row_line_rtt_ns, row_kernel_ns)\n");
  if (!o_.netdev.empty())
    std::printf("# link: bytes and packets per call on %s of each of %zu hosts (--json)\n",
                o_.netdev.c_str(), hosts_.size());
  if (o_.overlap)
    std::printf(
        "# overlap (OSU style): pure = MPI_I<coll> + MPI_Wait alone; compute = a floating-point "
        "loop calibrated per size to take about pure, between MPI_I<coll> and MPI_Wait, %d "
        "MPI_Test calls within (not counted in it); total = post + compute + wait; overlap = "
        "max(0, 100 (1 - (total - compute) / pure)); each the slowest rank's per batch, median "
        "over the batches\n",
        o_.testsDuringCompute);
  else if (o_.burst > 0)
    std::printf(
        "# burst: %d calls of MPI_I<coll> of each size, each on its own buffers, then one "
        "MPI_Waitall; time per burst, algbw from the bytes of all its calls; every call checked\n",
        o_.burst);
  else if (o_.nonblocking > 0)
    std::printf("# nonblocking: i<coll> rows time MPI_I<coll> + MPI_Wait per call\n");
  std::printf("# sizes %zu .. %zu B, factor %zu\n#\n", sizes.empty() ? 0 : sizes.front(),
              sizes.empty() ? 0 : sizes.back(), o_.stepFactor);
  const std::vector<Column> cols = columns();
  int block = 0;  // the width of one in-place mode's columns
  for (const Column& c : cols) block += 1 + c.width;
  auto names = [&](const char* a, const char* b, const char* c, const char* d, const char* e,
                   const char* f) {
    std::printf("# %-*s %12s %12s %7s %5s %5s", kNameWidth, a, b, c, d, e, f);
  };
  names("", "", "", "", "", "");
  for (bool inPlace : modes_)
    std::printf("  %*s", block - 1, inPlace ? "in-place" : "out-of-place");
  std::printf("\n");
  names("coll", "size", "count", "type", "op", "root");
  for (std::size_t i = 0; i < modes_.size(); ++i) {
    std::printf(" ");
    for (const Column& c : cols) std::printf(" %*s", c.width, c.title);
  }
  std::printf("\n");
  names("", "(B)", "(elements)", "", "", "");
  for (std::size_t i = 0; i < modes_.size(); ++i) {
    std::printf(" ");
    for (const Column& c : cols) std::printf(" %*s", c.width, c.unit);
  }
  std::printf("\n");
  std::fflush(stdout);
}

std::vector<Column> Bench::columns() const {
  if (o_.overlap)
    return {{"pure", "(us)", 10},
            {"compute", "(us)", 10},
            {"total", "(us)", 10},
            {"overlap", "(%)", 7},
            {"#wrong", "", 7}};
  std::vector<Column> cols = {{"time", o_.burst > 0 ? "(us/burst)" : "(us)", 10},
                              {"algbw", "(GB/s)", 8},
                              {"busbw", "(GB/s)", 8}};
  if (o_.syncEach) {
    cols.push_back({"p50", "(us)", 9});
    cols.push_back({"p99", "(us)", 9});
  }
  if (o_.paired) {
    cols.push_back({"library", "(us)", 10});
    cols.push_back({"ratio", "(x)", 7});
  }
  cols.push_back({"#wrong", "", 7});
  return cols;
}

void Bench::printRow(const Call& k, const Shape& s, const std::vector<Cell>& cells) const {
  const CollInfo& info = collInfo(k.coll);
  std::printf("  %-*s %12zu %12zu %7s %5s %5d", kNameWidth, callName(k.coll, k.nonblocking).c_str(),
              s.bytes, s.count, k.coll == Coll::kBarrier ? "none" : type_.name,
              info.reduces ? op_.name : "none", info.rooted ? o_.root : -1);
  const std::vector<Column> cols = columns();
  for (const Cell& c : cells) {
    std::printf(" ");
    std::vector<double> values =
        o_.overlap ? std::vector<double>{c.pureUs, c.computeUs, c.slowestUs, c.overlapPct}
                   : std::vector<double>{c.timeUs, c.algbw, c.busbw};
    if (o_.syncEach) values.insert(values.end(), {c.callP50Us, c.callP99Us});
    if (o_.paired) values.insert(values.end(), {c.librarySlowestUs, c.pairedRatio});
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const int w = cols[i].width;
      if (!c.ran)
        std::printf(" %*s", w, "N/A");
      else if (i < values.size())
        std::printf(" %*.*f", w,
                    cols[i].unit[1] == 'G'   ? 3
                    : cols[i].unit[1] == '%' ? 1
                                             : 2,
                    values[i]);
      else if (o_.check)  // #wrong
        std::printf(" %*lld", w, static_cast<long long>(c.wrong));
      else
        std::printf(" %*s", w, "N/A");
    }
  }
  std::printf("\n");
  std::fflush(stdout);
}

void Bench::record(Form form, const Call& k, const Shape& s, const Cell& c,
                   const std::optional<tools::LineProbe::Reading>& stateBefore,
                   const std::optional<tools::LineProbe::Reading>& stateAfter) {
  const CollInfo& info = collInfo(k.coll);
  nlohmann::json r = {
      {"coll", callName(k.coll, k.nonblocking)},
      {"bytes", s.bytes},
      {"count", s.count},
      {"inplace", k.inPlace},
      {"time_us", c.timeUs},
      {"min_us", c.minUs},
      {"max_us", c.maxUs},
      {"slowest_us", c.slowestUs},
      {"iters", c.iters},
      {"batches", o_.batches},
      {"sync_each", o_.syncEach},
      {"fresh", o_.fresh},
      {"paired", o_.paired},
      {"algbw", c.algbw},
      {"busbw", c.busbw},
      {"np", np_},
      {"datatype", k.coll == Coll::kBarrier ? "none" : type_.name},
      {"op", info.reduces ? op_.name : "none"},
      {"root", info.rooted ? o_.root : -1},
  };
  r["counts"] = kPatternNames[static_cast<int>(pattern_)];
  r["data_bytes"] = s.dataBytes;
  r["wrong"] = o_.check ? nlohmann::json(c.wrong) : nlohmann::json(nullptr);
  r["calls"] = static_cast<long long>(c.iters) * o_.batches;  // timed calls (bursts) per rank
  r["form"] = kFormNames[static_cast<int>(form)];
  if (form == Form::kOverlap) {
    r["pure_us"] = c.pureUs;
    r["compute_us"] = c.computeUs;
    r["total_us"] = c.slowestUs;
    r["overlap"] = c.overlapPct;
    r["test_calls"] = o_.testsDuringCompute;
  }
  if (form == Form::kBurst) r["burst"] = o_.burst;  // the times are per burst
  // A cache line's round trip between ranks 0 and 1, and a kernel round trip, before and after the
  // row (null where they share no node).
  const bool read = stateBefore && stateAfter;
  r["row_line_rtt_ns"] =
      read ? nlohmann::json{stateBefore->lineNs, stateAfter->lineNs} : nlohmann::json(nullptr);
  r["row_kernel_ns"] =
      read ? nlohmann::json{stateBefore->kernelNs, stateAfter->kernelNs} : nlohmann::json(nullptr);
  if (o_.syncEach) {
    r["call_p50_us"] = c.callP50Us;
    r["call_p99_us"] = c.callP99Us;
  }
  if (o_.paired) {
    r["library_slowest_us"] = c.librarySlowestUs;
    r["paired_ratio"] = c.pairedRatio;
    if (o_.syncEach) {
      r["library_call_p50_us"] = c.libraryP50Us;
      r["library_call_p99_us"] = c.libraryP99Us;
    }
  }
  if (!o_.netdev.empty()) {
    nlohmann::json rx = nlohmann::json::array(), rxp = rx, tx = rx, txp = rx;
    for (const LinkCounters& l : c.link) {
      rx.push_back(l.rxBytes);
      rxp.push_back(l.rxPackets);
      tx.push_back(l.txBytes);
      txp.push_back(l.txPackets);
    }
    r["link_hosts"] = hosts_;
    r["link_rx_bytes"] = rx;
    r["link_rx_packets"] = rxp;
    r["link_tx_bytes"] = tx;
    r["link_tx_packets"] = txp;
  }
  records_.push_back(std::move(r));
}

int Bench::run(const std::vector<Coll>& colls, const std::vector<std::size_t>& sizes) {
  if (o_.inPlace != 1) modes_.push_back(false);
  if (o_.inPlace != 0) modes_.push_back(true);
  if (o_.overlap)
    forms_ = {Form::kOverlap};
  else if (o_.burst > 0)
    forms_ = {Form::kBurst};
  else if (o_.nonblocking == 2)
    forms_ = {Form::kBlocking, Form::kNonblocking};
  else
    forms_ = {o_.nonblocking ? Form::kNonblocking : Form::kBlocking};
  if (!o_.netdev.empty() && !setUpLink()) return kExitUsage;
  if (rank_ == 0) printHeader(sizes);
  std::string oneCount;  // the collectives a count pattern does not apply to
  for (Coll coll : colls)
    if (pattern_ != CountPattern::kUniform && !collInfo(coll).varies)
      oneCount += std::string(oneCount.empty() ? "" : ", ") + collInfo(coll).name;
  if (rank_ == 0 && !oneCount.empty())
    std::printf("# %s: one count on every rank; --counts %s does not apply, skipped\n",
                oneCount.c_str(), kPatternNames[static_cast<int>(pattern_)]);

  for (Coll coll : colls) {
    const CollInfo& info = collInfo(coll);
    const bool anyMode = std::any_of(modes_.begin(), modes_.end(),
                                     [&](bool inPlace) { return !inPlace || info.hasInPlace; });
    if (!anyMode) {
      if (rank_ == 0) std::printf("# %s: MPI has no in-place form; skipped\n", info.name);
      continue;
    }
    if (pattern_ != CountPattern::kUniform && !info.varies) continue;  // said below the header
    const Pattern pattern = makePattern(pattern_, coll, o_.root, np_);
    // The barrier has no size: it runs once.
    const std::vector<std::size_t> rowSizes =
        coll == Coll::kBarrier ? std::vector<std::size_t>{0} : sizes;
    for (std::size_t requested : rowSizes) {
      const std::optional<Shape> shape =
          makeShape(coll, requested, type_.size, np_, rank_, pattern);
      if (!shape) continue;
      if (!shape->fits) {
        if (rank_ == 0)
          std::printf("# %s %zu B: --counts %s needs counts beyond MPI's int; skipped\n", info.name,
                      shape->bytes, kPatternNames[static_cast<int>(pattern_)]);
        continue;
      }
      // One row per form (--nonblocking 2: MPI_<coll>, then MPI_I<coll> at the same size).
      for (Form form : forms_) {
        std::vector<Cell> cells;
        Call k{};
        const std::optional<tools::LineProbe::Reading> stateBefore =
            probe_ ? probe_->measure() : std::nullopt;
        for (bool inPlace : modes_) {
          k = {coll,
               inPlace,
               type_.mpi,
               op_.mpi,
               o_.root,
               rank_,
               static_cast<int>(shape->block),
               shape->counts.data(),
               shape->displs.data(),
               form != Form::kBlocking,
               /*library=*/false};
          Cell c;
          if (!inPlace || info.hasInPlace) c = measure(form, k, *shape);
          cells.push_back(c);
        }
        const std::optional<tools::LineProbe::Reading> stateAfter =
            probe_ ? probe_->measure() : std::nullopt;
        if (rank_ != 0) continue;
        for (std::size_t m = 0; m < cells.size(); ++m) {
          const Cell& c = cells[m];
          if (!c.ran) continue;
          totalWrong_ += c.wrong;
          if (coll != Coll::kBarrier) {
            busbwSum_ += c.busbw;
            ++busbwCount_;
          }
          k.inPlace = modes_[m];
          record(form, k, *shape, c, stateBefore, stateAfter);
        }
        printRow(k, *shape, cells);
      }
    }
  }
  if (rank_ != 0) return 0;

  std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(totalWrong_),
              totalWrong_ ? "FAILED" : "OK");
  std::printf("# Avg bus bandwidth    : %g\n", busbwCount_ ? busbwSum_ / busbwCount_ : 0.0);
  if (!o_.check) std::printf("# (results not checked: -c 0)\n");
  std::printf("#\n");
  std::fflush(stdout);
  int status = totalWrong_ ? kExitWrong : 0;
  if (!o_.jsonPath.empty()) {
    std::ofstream out(o_.jsonPath);
    out << records_.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "overpass-bench: cannot write %s\n", o_.jsonPath.c_str());
      status = std::max(status, kExitUsage);
    }
  }
  return status;
}

// Parses and validates the command line. Returns the exit status to stop with, if any.
std::optional<int> parseOptions(int argc, char** argv, int rank, int np, Options& o) {
  CLI::App app{"overpass-bench: MPI collective benchmark (nccl-tests style)", "overpass-bench"};
  std::vector<std::string> typeNames;
  for (const TypeInfo& t : typeTable()) typeNames.push_back(t.name);
  std::vector<std::string> opNames;
  for (const OpInfo& op : opTable()) opNames.push_back(op.name);

  app.add_option("-b,--minbytes", o.minBytesText, "Smallest size (K/M/G suffixes: x1024)")
      ->capture_default_str();
  app.add_option("-e,--maxbytes", o.maxBytesText, "Largest size (K/M/G suffixes: x1024)")
      ->capture_default_str();
  app.add_option("-f,--stepfactor", o.stepFactor, "Multiply the size by this between rows")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 20));
  app.add_option("-n,--iters", o.iters, "Timed iterations")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("-w,--warmup_iters", o.warmup, "Warm-up iterations")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--time", o.timeBudget,
                 "Seconds per size and mode instead of -n: the calls per batch fill it on the "
                 "slowest rank (a calibration, agreed by every rank, chooses them); 0: -n")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--batches", o.batches,
                 "Timed batches per size and mode; slowest_us in --json is the median over the "
                 "batches of the slowest rank's time per call")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("-d,--datatype", o.datatype, "Element type")
      ->capture_default_str()
      ->check(CLI::IsMember(typeNames));
  app.add_option("-o,--op", o.op, "Reduction operation")
      ->capture_default_str()
      ->check(CLI::IsMember(opNames));
  app.add_option("-r,--root", o.root, "Root of bcast, reduce, gather, scatter")
      ->capture_default_str();
  app.add_option("-c,--check", o.check, "Check results exactly (0|1)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  app.add_option("--coll", o.coll,
                 "allreduce, bcast, reduce, scatter, gather, allgather, alltoall, "
                 "reduce_scatter_block, barrier, allgatherv, alltoallv, gatherv, scatterv, "
                 "reduce_scatter, scan, exscan, or all (a comma-separated list is accepted)")
      ->capture_default_str();
  app.add_option("--counts", o.counts,
                 "Per-rank counts of allgatherv, alltoallv, gatherv, scatterv, reduce_scatter: "
                 "uniform; skewed (one rank's block 10x the others': the root's next rank in "
                 "gatherv and scatterv, rank 0 in the others); half-zero (the ranks at odd "
                 "distance from the root, or from rank 0, have none). The size is the uniform "
                 "pattern's; other collectives are skipped unless uniform")
      ->capture_default_str()
      ->check(CLI::IsMember({"uniform", "skewed", "half-zero"}));
  app.add_option("--inplace", o.inPlace, "0 out-of-place, 1 in-place, 2 both")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  app.add_flag("--cold", o.cold, "Rotate buffers over more than twice the last-level cache");
  app.add_option("--memory", o.memory,
                 "Where the buffers live: host, cuda, or sim (the simulated device of "
                 "gpu/sim_device.h; run with OVERPASS_SIM_DEVICE=1)")
      ->capture_default_str()
      ->check(CLI::IsMember({"host", "cuda", "sim"}));
  app.add_option("--json", o.jsonPath, "Write the results as a JSON list (rank 0)");
  CLI::Option* netdev =
      app.add_option("--netdev", o.netdev,
                     "Count what this network interface of each host moves per timed call "
                     "(/proc/net/dev, read by each host's lowest rank before and after the timed "
                     "batches; the batches' barriers measured and subtracted): per host bytes and "
                     "packets, in --json as link_tx_bytes, link_rx_bytes, link_tx_packets, "
                     "link_rx_packets (host order: link_hosts)");
  CLI::Option* nonblocking =
      app.add_option("--nonblocking", o.nonblocking,
                     "Nonblocking collectives: 0 MPI_<coll> only (the default); 1 (also the bare "
                     "flag) MPI_I<coll> + MPI_Wait per call, in rows named i<coll>; 2 both, each "
                     "i<coll> row after the <coll> row of its size. Timed, checked and reported as "
                     "the blocking calls (--json: coll i<coll>, form nonblocking)")
          ->expected(0, 1)
          ->default_str("1")
          ->option_text("[0|1|2]")
          ->check(CLI::Range(0, 2));
  CLI::Option* overlap =
      app.add_flag("--overlap", o.overlap,
                   "Overlap of MPI_I<coll> with computation, as the OSU micro-benchmarks "
                   "(osu_iallreduce, ...) define it, per size: pure = MPI_I<coll> + MPI_Wait "
                   "alone; compute = a floating-point loop calibrated per size to take about "
                   "pure; total = MPI_I<coll>, the loop, MPI_Wait; overlap % = max(0, 100 (1 - "
                   "(total - compute) / pure)); each the slowest rank's per batch, median over "
                   "the batches (--json: pure_us, compute_us, total_us, overlap; form overlap). "
                   "--time applies to pure and to total each")
          ->excludes(nonblocking);
  app.add_option("--test-during-compute", o.testsDuringCompute,
                 "With --overlap: K calls of MPI_Test on the request, evenly spaced within the "
                 "computation (their time is not counted as computation)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20))
      ->needs(overlap);
  app.add_option("--burst", o.burst,
                 "N calls of MPI_I<coll> of each size, each on its own buffers, then one "
                 "MPI_Waitall, timed as a whole (the time and algbw are the burst's; every "
                 "call's result is checked; --json: burst N, form burst); e.g. --burst 256 -b 4K "
                 "-e 4K, one allreduce per layer of a naive data-parallel training step")
      ->check(CLI::Range(1, 1 << 20))
      ->excludes(nonblocking)
      ->excludes(overlap);

  app.add_flag("--sync-each", o.syncEach,
               "A barrier of the MPI library itself (PMPI_Barrier, which Overpass does not "
               "serve) before every timed call, outside its time: each call starts with every "
               "rank at the line, as a call after a phase of the application's own does; a "
               "rank's time is then the mean of its calls' own times; columns p50 and p99: over "
               "the calls, the median and 99th percentile of each call's slowest rank (--json: "
               "sync_each, call_p50_us, call_p99_us)")
      ->excludes(overlap);
  app.add_flag("--fresh", o.fresh,
               "With --sync-each: before every timed call, outside its time, each rank rewrites "
               "its input (the send buffer; the receive buffer in place and for bcast), as an "
               "application that has just computed it, so that no call finds the peers' data "
               "still in its own cache from the call before (host memory, hot buffers; --json: "
               "fresh)")
      ->needs("--sync-each")
      ->excludes("--cold");
  app.add_flag("--line-rtt", o.lineRtt,
               "Read the machine's state before and after each row: a cache line's round trip "
               "between ranks 0 and 1 where they share a node, through shared memory, and a "
               "kernel round trip at rank 0 (process_vm_readv of 64 bytes) (--json "
               "row_line_rtt_ns, row_kernel_ns; a few ms per reading)");
  app.add_flag("--paired", o.paired,
               "Time the MPI library's own call (PMPI_<coll>, past any preloaded interposer) "
               "beside the call under test, in the same process: their batches alternate (AB, "
               "BA, ...), so that a change of the machine's state during the run falls on both "
               "alike; columns library (its time, as time) and ratio (per pair of batches the "
               "library's slowest rank's time over the call under test's, median over the "
               "pairs; above 1: the call under test is faster); --json: paired, "
               "library_slowest_us, paired_ratio, with --sync-each library_call_p50_us and "
               "library_call_p99_us")
      ->excludes(overlap)
      ->excludes(netdev);
  app.get_option("--burst")->excludes("--paired");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) {
      const int rc = app.exit(e);
      return rc == 0 ? 0 : kExitUsage;
    }
    return e.get_exit_code() == 0 ? 0 : kExitUsage;
  }

  std::string error;
  const auto minBytes = tools::parseSizeText(o.minBytesText);
  const auto maxBytes = tools::parseSizeText(o.maxBytesText);
  if (!minBytes || !maxBytes) {
    error = std::string(minBytes ? "--maxbytes" : "--minbytes") + ": '" +
            (minBytes ? o.maxBytesText : o.minBytesText) +
            "' is not a size (a whole number of bytes, optionally with a K, M or G suffix: x1024)";
  } else if (*minBytes == 0 || *minBytes > *maxBytes) {
    error = "need 0 < --minbytes <= --maxbytes, got --minbytes " + o.minBytesText + " --maxbytes " +
            o.maxBytesText;
  } else if (*maxBytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    error = "--maxbytes above 2 GiB - 1 is not supported (MPI int counts)";
  } else if (o.root < 0 || o.root >= np) {
    error = "--root " + std::to_string(o.root) + " is not a rank of " + std::to_string(np);
  } else if (o.fresh && o.memory != "host") {
    error = "--fresh rewrites host memory only, not --memory " + o.memory;
  } else if (!parseColls(o.coll)) {
    error = "--coll: unknown collective in '" + o.coll + "'";
  } else if (o.burst > 0 &&
             static_cast<double>(o.burst) * static_cast<double>(*maxBytes) > kMaxBurstBytes) {
    error = "--burst " + std::to_string(o.burst) + " x --maxbytes " + o.maxBytesText +
            ": more than 1 GiB of buffers per rank and direction; lower --burst or --maxbytes";
  }
  if (!error.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "overpass-bench: %s\nRun with --help for more information.\n",
                   error.c_str());
    return kExitUsage;
  }
  o.minBytes = *minBytes;
  o.maxBytes = *maxBytes;
  return std::nullopt;
}

int benchMain(int argc, char** argv) {
  int rank = 0;
  int np = 1;
  MPI_Comm_rank(kComm, &rank);
  MPI_Comm_size(kComm, &np);

  Options o;
  if (const std::optional<int> stop = parseOptions(argc, argv, rank, np, o)) return *stop;

  std::string error;
  const std::unique_ptr<Memory> memory = makeMemory(o.memory, &error);
  if (!memory) {
    if (rank == 0) std::fprintf(stderr, "overpass-bench: %s\n", error.c_str());
    return kExitUsage;
  }
  const TypeInfo& type = *std::find_if(typeTable().begin(), typeTable().end(),
                                       [&](const TypeInfo& t) { return o.datatype == t.name; });
  const OpInfo& op = *std::find_if(opTable().begin(), opTable().end(),
                                   [&](const OpInfo& x) { return o.op == x.name; });

  // minbytes, times the factor while below maxbytes, then maxbytes itself: every size the user
  // asked for is present, the last one even when it is not minbytes times a power of the factor.
  std::vector<std::size_t> sizes;
  for (std::size_t s = o.minBytes; s < o.maxBytes; s *= o.stepFactor) {
    sizes.push_back(s);
    if (s > o.maxBytes / o.stepFactor) break;
  }
  sizes.push_back(o.maxBytes);

  const std::vector<Coll> colls = *parseColls(o.coll);
  const auto pattern = static_cast<CountPattern>(
      std::find(std::begin(kPatternNames), std::end(kPatternNames), o.counts) -
      std::begin(kPatternNames));

  // One pool for the whole run: the largest size (a count pattern's buffers on this rank may be
  // larger), or (cold) enough that both regions together exceed twice the last-level cache with
  // at least two slots of the largest size.
  std::size_t largest = o.maxBytes;
  for (Coll coll : colls) {
    const std::optional<Shape> s =
        makeShape(coll, o.maxBytes, type.size, np, rank, makePattern(pattern, coll, o.root, np));
    if (s && s->fits) largest = std::max({largest, s->sendBytes, s->recvBytes});
  }
  // --burst: its calls' buffers side by side.
  const std::size_t maxSpan = slotBytes(largest) * static_cast<std::size_t>(std::max(o.burst, 1));
  const std::size_t capacity = o.cold ? std::max(lastLevelCacheBytes(), 2 * maxSpan) : maxSpan;
  BufferPool pool(*memory, capacity, o.cold);
  if (!pool.ok()) {
    std::fprintf(stderr, "overpass-bench: rank %d: cannot allocate 2 x %zu bytes\n", rank,
                 capacity);
    MPI_Abort(kComm, kExitUsage);
  }
  withType(type.type, [&]<typename T>() { pool.fillQuiet<T>(); });

  Bench bench(o, type, op, pattern, *memory, pool, largest, rank, np);
  return bench.run(colls, sizes);
}

}  // namespace
}  // namespace overpass::bench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int status = overpass::bench::benchMain(argc, argv);
  MPI_Finalize();
  return status;
}
