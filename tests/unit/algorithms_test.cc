// Every registered algorithm against a serial reference, on teams of threads over the loopback
// transport: team sizes 1-9, 13 and 16; counts 0, 1, p-1, p+1, odd and larger; every root;
// in-place and out-of-place.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "coll/device/device_ipc.h"
#include "coll/phases/cma.h"
#include "coll/select/registry.h"
#include "element_bytes.h"
#include "gpu/sim_device.h"
#include "gpu/sim_memory.h"
#include "kernels/reduce_kernels.h"
#include "loopback_team.h"
#include "over_nodes.h"
#include "shm/core_distance.h"

namespace overpass {
namespace {

using test::canonical;
using test::layoutsOver;
using test::NodeLayout;
using test::Pair;
using test::placed;
using test::runOverNodes;
using test::runTeam;

const std::vector<int> kSizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16};

std::vector<std::size_t> countsFor(int p) {
  return {0, 1, static_cast<std::size_t>(p - 1), static_cast<std::size_t>(p + 1), 7, 1001};
}

// The collectives of one count per call: the suites below; the vector collectives and the scans
// have their own (vector_algorithms_test.cc).
bool fixedCount(Collective c) {
  return !isVector(c) && c != Collective::kScan && c != Collective::kExscan;
}

std::vector<const Algorithm*> algorithmsOf(Collective coll) {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : algorithms())
    if (a.coll == coll && a.kind == AlgorithmKind::kHost) out.push_back(&a);
  return out;
}

// The call's shape as the selector sees it (coll/select/cost_model.h), from what every rank of
// `team` shares: sizes, the team's size, nodes and shared-memory channel.
CallShape shapeOf(const CollArgs& a, const Team& team) {
  CallShape s;
  s.coll = a.coll;
  s.bytes = a.bytes;
  s.count = isReduction(a.coll) ? a.count : a.bytes;
  s.teamSize = team.size();
  s.shmBuffer = team.shm ? team.shm->bufferBytes() : 0;
  const Topology* t = team.topology;
  const bool spread = t && t->size() == team.size();
  s.nodes = spread ? t->nodeCount() : 1;
  s.maxPerNode = spread ? t->maxRanksPerNode() : team.size();
  return s;
}

// Runs `alg` on the call: kOk, or kDeclined where (and only where) the registry's serves
// rejects the call's shape (an algorithm never runs another in its place). True where it
// declined: the caller has no result to compare.
bool declined(const Algorithm& alg, const CollArgs& a, Team& team) {
  const Status s = alg.run(a, team);
  if (s == Status::kDeclined) {
    EXPECT_TRUE(alg.serves && !alg.serves(shapeOf(a, team)))
        << collectiveName(alg.coll) << " " << alg.name << " declined a call it serves";
    return true;
  }
  EXPECT_EQ(s, Status::kOk) << collectiveName(alg.coll) << " " << alg.name;
  return s != Status::kOk;
}

// Deterministic data of rank r: `n` int32 values.
std::vector<std::int32_t> data(int r, std::size_t n, int salt = 0) {
  std::mt19937 gen(static_cast<unsigned>(r * 7919 + n * 31 + salt));
  std::uniform_int_distribution<std::int32_t> dist(-1000000, 1000000);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

std::vector<std::int32_t> sumOver(int p, std::size_t n) {
  std::vector<std::int32_t> s(n, 0);
  for (int r = 0; r < p; ++r) {
    auto d = data(r, n);
    for (std::size_t i = 0; i < n; ++i) s[i] += d[i];
  }
  return s;
}

CollArgs reductionArgs(Collective coll, std::size_t count) {
  CollArgs a;
  a.coll = coll;
  a.count = count;
  a.bytes = count * sizeof(std::int32_t);
  a.type = DataType::kInt32;
  a.op = ReduceOp::kSum;
  return a;
}

class AlgorithmTest : public ::testing::TestWithParam<const Algorithm*> {};

std::string nameOf(const ::testing::TestParamInfo<const Algorithm*>& info) {
  return std::string(collectiveName(info.param->coll)) + "_" + std::string(info.param->name);
}

#define OVERPASS_ALGORITHM_SUITE(Suite, coll) \
  class Suite : public AlgorithmTest {};      \
  INSTANTIATE_TEST_SUITE_P(Registered, Suite, ::testing::ValuesIn(algorithmsOf(coll)), nameOf)

OVERPASS_ALGORITHM_SUITE(Allreduce, Collective::kAllreduce);
TEST_P(Allreduce, MatchesSerialSumInAndOutOfPlace) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      for (bool inPlace : {false, true}) {
        const auto expected = sumOver(p, n);
        runTeam(p, [&](Team& team) {
          auto in = data(team.rank(), n);
          std::vector<std::int32_t> out(n, -7);
          if (inPlace) out = in;
          CollArgs a = reductionArgs(Collective::kAllreduce, n);
          a.sendbuf = inPlace ? out.data() : in.data();
          a.recvbuf = out.data();
          if (declined(*GetParam(), a, team)) return;
          EXPECT_EQ(out, expected) << "p=" << p << " n=" << n << " rank " << team.rank();
        });
      }
}

TEST_P(Allreduce, FloatResultsAreBitwiseIdenticalOnEveryRank) {
  for (int p : {3, 5, 6, 7, 13}) {
    const std::size_t n = 257;
    std::vector<std::vector<double>> results(p);
    runTeam(p, [&](Team& team) {
      std::mt19937_64 gen(team.rank() + 1);
      std::uniform_real_distribution<double> dist(-1, 1);
      std::vector<double> in(n), out(n);
      for (auto& x : in) x = dist(gen) * 1e3;
      CollArgs a;
      a.coll = Collective::kAllreduce;
      a.count = n;
      a.bytes = n * sizeof(double);
      a.type = DataType::kDouble;
      a.op = ReduceOp::kSum;
      a.sendbuf = in.data();
      a.recvbuf = out.data();
      if (declined(*GetParam(), a, team)) return;
      results[team.rank()] = out;
    });
    if (results[0].empty()) continue;  // declined (on every rank: checked by declined())
    for (int r = 1; r < p; ++r)
      EXPECT_EQ(std::memcmp(results[r].data(), results[0].data(), n * sizeof(double)), 0)
          << "p=" << p << " rank " << r;
  }
}

OVERPASS_ALGORITHM_SUITE(Reduce, Collective::kReduce);
TEST_P(Reduce, MatchesSerialSumAtEveryRoot) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      for (int root = 0; root < p; ++root) {
        const auto expected = sumOver(p, n);
        runTeam(p, [&](Team& team) {
          auto in = data(team.rank(), n);
          std::vector<std::int32_t> out(n, -7);
          const bool isRoot = team.rank() == root;
          const bool inPlace = isRoot && root % 2 == 1;
          if (inPlace) out = in;
          CollArgs a = reductionArgs(Collective::kReduce, n);
          a.root = root;
          a.sendbuf = inPlace ? out.data() : in.data();
          a.recvbuf = isRoot ? out.data() : nullptr;
          if (declined(*GetParam(), a, team)) return;
          if (isRoot) {
            EXPECT_EQ(out, expected) << "p=" << p << " n=" << n << " root " << root;
          }
        });
      }
}

OVERPASS_ALGORITHM_SUITE(ReduceScatterBlock, Collective::kReduceScatterBlock);
TEST_P(ReduceScatterBlock, EachRankGetsItsReducedBlock) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p)) {
      const auto expected = sumOver(p, n * p);
      runTeam(p, [&](Team& team) {
        auto in = data(team.rank(), n * p);
        std::vector<std::int32_t> out(n, -7);
        CollArgs a = reductionArgs(Collective::kReduceScatterBlock, n);
        a.sendbuf = in.data();
        a.recvbuf = out.data();
        if (declined(*GetParam(), a, team)) return;
        const std::vector<std::int32_t> mine(expected.begin() + team.rank() * n,
                                             expected.begin() + (team.rank() + 1) * n);
        EXPECT_EQ(out, mine) << "p=" << p << " n=" << n << " rank " << team.rank();
      });
    }
}

// ---- Every datatype and operation, rank-order bits, large vectors (reductions) ----------------

// Rank r's element i as `type`: small integers (exact in every type and every order of
// combination), logical values 0/1, pairs whose index is the rank (ties resolve alike).
void setElement(DataType type, unsigned char* at, int r, std::size_t i) {
  const int v = static_cast<int>((r * 7 + i * 3) % 5) + 1;
  auto put = [&](auto x) { std::memcpy(at, &x, sizeof x); };
  switch (type) {
    case DataType::kInt8:
      return put(static_cast<std::int8_t>(v));
    case DataType::kUint8:
      return put(static_cast<std::uint8_t>(v));
    case DataType::kInt16:
      return put(static_cast<std::int16_t>(v));
    case DataType::kUint16:
      return put(static_cast<std::uint16_t>(v));
    case DataType::kInt32:
      return put(static_cast<std::int32_t>(v));
    case DataType::kUint32:
      return put(static_cast<std::uint32_t>(v));
    case DataType::kInt64:
      return put(static_cast<std::int64_t>(v));
    case DataType::kUint64:
      return put(static_cast<std::uint64_t>(v));
    case DataType::kFloat:
      return put(static_cast<float>(v));
    case DataType::kDouble:
      return put(static_cast<double>(v));
    case DataType::kLongDouble:
      return put(static_cast<long double>(v));
    case DataType::kComplexFloat:
      return put(std::complex<float>(v, 1));
    case DataType::kComplexDouble:
      return put(std::complex<double>(v, 1));
    case DataType::kBool:
      return put(static_cast<std::uint8_t>(v % 2));
    case DataType::kLogical32:
      return put(static_cast<std::int32_t>(v % 2));
    case DataType::kByte:
      return put(static_cast<std::uint8_t>(v * 37));
    case DataType::kFloatInt:
      return put(Pair<float, int>(v, r));
    case DataType::kDoubleInt:
      return put(Pair<double, int>(v, r));
    case DataType::kLongInt:
      return put(Pair<long, int>(v, r));
    case DataType::kIntInt:
      return put(Pair<int, int>(v, r));
    case DataType::kShortInt:
      return put(Pair<short, int>(static_cast<short>(v), r));
    case DataType::kLongDoubleInt:
      std::memset(at, 0, dataTypeSize(type));
      return put(Pair<long double, int>(v, r));
    case DataType::kFloatFloat:
      return put(Pair<float, float>(v, r));
    case DataType::kDoubleDouble:
      return put(Pair<double, double>(v, r));
    default:
      FAIL() << "type " << dataTypeName(type);
  }
}

std::vector<unsigned char> elements(DataType type, int r, std::size_t n) {
  std::vector<unsigned char> v(n * dataTypeSize(type) + 1, 0);
  for (std::size_t i = 0; i < n; ++i) setElement(type, v.data() + i * dataTypeSize(type), r, i);
  v.pop_back();
  return v;
}

// Runs `alg` (a reduction) on p ranks; returns what each rank holds afterwards (the root's
// vector for reduce, the own block for reduce_scatter_block, the vector for allreduce).
std::vector<std::vector<unsigned char>> runReduction(
    const Algorithm& alg, int p, std::size_t n, DataType type, ReduceOp op,
    const std::function<std::vector<unsigned char>(int)>& input) {
  std::vector<std::vector<unsigned char>> results(p);
  const std::size_t size = dataTypeSize(type);
  const int root = p - 1;
  runTeam(p, [&](Team& team) {
    std::vector<unsigned char> in = input(team.rank());
    std::vector<unsigned char> out(n * size, 0xEE);
    CollArgs a;
    a.coll = alg.coll;
    a.count = n;
    a.bytes = n * size;
    a.type = type;
    a.op = op;
    a.root = root;
    a.sendbuf = in.data();
    a.recvbuf = alg.coll == Collective::kReduce && team.rank() != root ? nullptr : out.data();
    if (declined(alg, a, team)) return;
    if (alg.coll != Collective::kReduce || team.rank() == root) results[team.rank()] = out;
  });
  return results;
}

std::vector<const Algorithm*> reductionAlgorithms() {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : algorithms())
    if (isReduction(a.coll) && fixedCount(a.coll) && a.kind == AlgorithmKind::kHost)
      out.push_back(&a);
  return out;
}

TEST(Reductions, EveryAlgorithmEveryTypeAndOperation) {
  for (const Algorithm* alg : reductionAlgorithms())
    for (std::size_t t = 0; t < static_cast<std::size_t>(DataType::kCount); ++t)
      for (std::size_t o = 0; o < static_cast<std::size_t>(ReduceOp::kUser); ++o) {
        const auto type = static_cast<DataType>(t);
        const auto op = static_cast<ReduceOp>(o);
        if (!isValidReduction(type, op)) continue;
        for (int p : {3, 4}) {
          const std::size_t n = 5, blocks = alg->coll == Collective::kReduceScatterBlock ? p : 1;
          auto input = [&](int r) { return elements(type, r, n * blocks); };
          std::vector<unsigned char> expected = input(0);
          for (int r = 1; r < p; ++r)
            reduceLocal(input(r).data(), expected.data(), n * blocks, type, op);
          const auto results = runReduction(*alg, p, n, type, op, input);
          const std::size_t bytes = n * dataTypeSize(type);
          for (int r = 0; r < p; ++r) {
            if (results[r].empty()) continue;
            const std::size_t at = alg->coll == Collective::kReduceScatterBlock ? r * bytes : 0;
            EXPECT_EQ(canonical(type, results[r].data(), n),
                      canonical(type, expected.data() + at, n))
                << collectiveName(alg->coll) << " " << alg->name << " " << dataTypeName(type) << " "
                << reduceOpName(op) << " p=" << p << " rank " << r;
          }
        }
      }
}

TEST(Reductions, EveryAlgorithmOnAMillionElements) {
  const std::size_t n = (1u << 20) + 3;
  for (const Algorithm* alg : reductionAlgorithms()) {
    const int p = alg->coll == Collective::kReduceScatterBlock ? 3 : 4;
    const std::size_t count = alg->coll == Collective::kReduceScatterBlock ? n / p : n;
    const std::size_t blocks = alg->coll == Collective::kReduceScatterBlock ? p : 1;
    auto input = [&](int r) {
      auto v = data(r, count * blocks);
      return std::vector<unsigned char>(reinterpret_cast<unsigned char*>(v.data()),
                                        reinterpret_cast<unsigned char*>(v.data() + v.size()));
    };
    const auto expected = sumOver(p, count * blocks);
    const auto results = runReduction(*alg, p, count, DataType::kInt32, ReduceOp::kSum, input);
    const std::size_t bytes = count * sizeof(std::int32_t);
    for (int r = 0; r < p; ++r) {
      if (results[r].empty()) continue;
      const std::size_t at = alg->coll == Collective::kReduceScatterBlock ? r * count : 0;
      EXPECT_EQ(std::memcmp(results[r].data(), expected.data() + at, bytes), 0)
          << collectiveName(alg->coll) << " " << alg->name << " rank " << r;
    }
  }
}

// Deterministic mode's promise: every rank-order algorithm gives the bits of the serial
// left-to-right combination, whatever the team size and the block split.
TEST(Reductions, RankOrderAlgorithmsGiveTheSerialLeftToRightBits) {
  for (const Algorithm* alg : reductionAlgorithms()) {
    if (!alg->rankOrder) continue;
    for (int p : {2, 3, 5, 8})
      for (std::size_t n : {1ul, 7ul, 1000ul}) {
        const std::size_t blocks = alg->coll == Collective::kReduceScatterBlock ? p : 1;
        auto input = [&](int r) {
          std::mt19937_64 gen(r * 977 + n);
          std::uniform_real_distribution<double> unit(-1, 1);
          std::uniform_int_distribution<int> exponent(-12, 12);
          std::vector<double> v(n * blocks);
          for (double& x : v) x = std::ldexp(unit(gen), exponent(gen) * 3);
          return std::vector<unsigned char>(reinterpret_cast<unsigned char*>(v.data()),
                                            reinterpret_cast<unsigned char*>(v.data() + v.size()));
        };
        std::vector<double> expected(n * blocks, 0);
        std::memcpy(expected.data(), input(0).data(), n * blocks * sizeof(double));
        for (int r = 1; r < p; ++r) {
          const auto in = input(r);
          const auto* x = reinterpret_cast<const double*>(in.data());
          for (std::size_t i = 0; i < n * blocks; ++i) expected[i] = expected[i] + x[i];
        }
        const auto results = runReduction(*alg, p, n, DataType::kDouble, ReduceOp::kSum, input);
        for (int r = 0; r < p; ++r) {
          if (results[r].empty()) continue;
          const std::size_t at = alg->coll == Collective::kReduceScatterBlock ? r * n : 0;
          EXPECT_EQ(std::memcmp(results[r].data(), expected.data() + at, n * sizeof(double)), 0)
              << collectiveName(alg->coll) << " " << alg->name << " p=" << p << " n=" << n;
        }
      }
  }
}

// A non-commutative operation on doubles (a op b = 2a - b) and the values rank r contributes:
// a result in the wrong operand order differs from the right one.
UserReduce leftBiased() {
  UserReduce op;
  op.fn = [](const void* in, void* inout, std::size_t count, void*) {
    const auto* a = static_cast<const double*>(in);
    auto* b = static_cast<double*>(inout);
    for (std::size_t i = 0; i < count; ++i) b[i] = 2 * a[i] - b[i];
  };
  op.commutative = false;
  op.elementBytes = sizeof(double);
  return op;
}
double value(int r, std::size_t i) {
  return static_cast<double>(r * 1000 + i % 97);
}
// A call of `n` doubles combined by `op` (leftBiased()); buffers and root are the caller's.
CollArgs leftBiasedArgs(Collective coll, std::size_t n, const UserReduce* op) {
  CollArgs a;
  a.coll = coll;
  a.count = n;
  a.bytes = n * sizeof(double);
  a.type = DataType::kDouble;
  a.op = ReduceOp::kUser;
  a.user = op;
  return a;
}

// The shm reduce on two ranks pipelines the other rank's chunks into the root's combination
// (coll/phases/shm_reduce.cc): each root, in place or not, on a non-commutative operation, over
// many chunks (the test buffers are 1 KiB).
TEST(Reductions, ShmReduceOnTwoRanksKeepsTheOperandOrderAtEitherRootInPlace) {
  const UserReduce op = leftBiased();
  const Algorithm* shm = findAlgorithm(Collective::kReduce, "shm");
  ASSERT_NE(shm, nullptr);
  const std::size_t n = 1001;  // 8008 bytes: above one round, eight chunks and a partial one
  for (int root : {0, 1})
    for (bool inPlace : {false, true}) {
      std::vector<double> result;
      runTeam(2, [&](Team& team) {
        std::vector<double> in(n), out(n, -1);
        for (std::size_t i = 0; i < n; ++i) in[i] = value(team.rank(), i);
        if (inPlace && team.rank() == root) out = in;
        CollArgs a = leftBiasedArgs(Collective::kReduce, n, &op);
        a.root = root;
        a.sendbuf = inPlace && team.rank() == root ? out.data() : in.data();
        a.recvbuf = team.rank() == root ? out.data() : nullptr;
        ASSERT_EQ(shm->run(a, team), Status::kOk);
        if (team.rank() == root) result = out;
      });
      ASSERT_EQ(result.size(), n);
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(result[i], 2 * value(0, i) - value(1, i))
            << "root " << root << (inPlace ? " in place" : "") << " element " << i;
    }
}

// The cma allreduce and reduce (coll/phases/cma.h): ranks reading each other's memory and
// writing the root's (here threads of one process, which may read and write their own), at every
// root, in place or not, on a non-commutative operation, over uneven blocks of several 1 MiB
// chunks and 256 KiB pieces (coll/phases/cma.cc; 300001 doubles), with the results formed in
// recvbuf, or (in place at rank 0 of two) in a bounce buffer, the allreduce's reduced blocks
// gathered through the channel in several rounds; every type and operation on two ranks (three
// and four: Reductions.EveryAlgorithmEveryTypeAndOperation).
TEST(Reductions, CmaAlgorithmsKeepTheOperandOrderAtEveryRootInPlace) {
  const UserReduce op = leftBiased();
  for (Collective coll : {Collective::kAllreduce, Collective::kReduce}) {
    const Algorithm* cma = findAlgorithm(coll, "cma");
    ASSERT_NE(cma, nullptr);
    const bool rooted = coll == Collective::kReduce;
    for (int p : {2, 3, 4})
      for (std::size_t n : {1ul, 2ul, 40001ul, 300001ul})
        for (int root = 0; root < (rooted ? p : 1); ++root)
          for (bool inPlace : {false, true}) {
            std::vector<std::vector<double>> results(static_cast<std::size_t>(p));
            runTeam(p, [&](Team& team) {
              const int r = team.rank();
              const bool receives = !rooted || r == root;
              std::vector<double> in(n), out(n, -1);
              for (std::size_t i = 0; i < n; ++i) in[i] = value(r, i);
              if (inPlace && receives) out = in;
              CollArgs a = leftBiasedArgs(coll, n, &op);
              a.root = root;
              a.sendbuf = inPlace && receives ? out.data() : in.data();
              a.recvbuf = receives ? out.data() : nullptr;
              ASSERT_EQ(cma->run(a, team), Status::kOk);
              if (receives) results[static_cast<std::size_t>(r)] = out;
            });
            for (int r = 0; r < p; ++r) {
              if (rooted && r != root) continue;
              const std::vector<double>& got = results[static_cast<std::size_t>(r)];
              ASSERT_EQ(got.size(), n);
              for (std::size_t i = 0; i < n; ++i) {
                double expected = value(0, i);
                for (int q = 1; q < p; ++q) expected = 2 * expected - value(q, i);
                ASSERT_EQ(got[i], expected)
                    << collectiveName(coll) << " p " << p << " n " << n << " root " << root
                    << (inPlace ? " in place" : "") << " rank " << r << " element " << i;
              }
            }
          }
    for (std::size_t t = 0; t < static_cast<std::size_t>(DataType::kCount); ++t)
      for (std::size_t o = 0; o < static_cast<std::size_t>(ReduceOp::kUser); ++o) {
        const auto type = static_cast<DataType>(t);
        const auto o2 = static_cast<ReduceOp>(o);
        if (!isValidReduction(type, o2)) continue;
        const std::size_t n = 5;
        std::vector<unsigned char> order = elements(type, 1, n);
        reduceLocal(elements(type, 0, n).data(), order.data(), n, type, o2);  // x0 op x1
        const auto results =
            runReduction(*cma, 2, n, type, o2, [&](int r) { return elements(type, r, n); });
        for (int r = 0; r < 2; ++r) {
          if (results[r].empty()) continue;  // reduce: not the root
          EXPECT_EQ(canonical(type, results[r].data(), n), canonical(type, order.data(), n))
              << collectiveName(coll) << " " << dataTypeName(type) << " " << reduceOpName(o2)
              << " rank " << r;
        }
      }
  }
}

// The post algorithms (coll/*/post.cc) over many calls on one channel: each call's root the next
// rank, the three collectives in turn, a round-based call (the shm bcast) between them, more
// calls than a box has slots, and the ranks far apart in time (rank 1 pauses now and then):
// every result right, the posts of each pair taken in the order posted.
TEST(Posts, ManyCallsAndRootsOnOneChannelKeepEveryResult) {
  const Algorithm* bcast = findAlgorithm(Collective::kBcast, "post");
  const Algorithm* gather = findAlgorithm(Collective::kGather, "post");
  const Algorithm* scatter = findAlgorithm(Collective::kScatter, "post");
  const Algorithm* rounds = findAlgorithm(Collective::kBcast, "shm");
  ASSERT_TRUE(bcast && gather && scatter && rounds);
  for (int p : {2, 3, 4, 8}) {
    constexpr int kCalls = 60;
    const std::size_t n = 13;  // int32 elements: 52 bytes, one post
    runTeam(p, [&](Team& team) {
      const int me = team.rank();
      for (int call = 0; call < kCalls; ++call) {
        if (me == 1 && call % 16 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const int root = call % p;
        CollArgs a;
        a.root = root;
        a.bytes = n * sizeof(std::int32_t);
        const std::string what = "p=" + std::to_string(p) + " call " + std::to_string(call);
        switch (call % 4) {
          case 0: {
            auto buf = me == root ? data(root, n, call) : std::vector<std::int32_t>(n, -7);
            a.coll = Collective::kBcast;
            a.recvbuf = buf.data();
            ASSERT_EQ(bcast->run(a, team), Status::kOk) << what;
            EXPECT_EQ(buf, data(root, n, call)) << what << " rank " << me;
            break;
          }
          case 1: {
            auto in = data(me, n, call);
            std::vector<std::int32_t> out(me == root ? n * p : 0, -7), expected;
            a.coll = Collective::kGather;
            a.sendbuf = in.data();
            a.recvbuf = out.data();
            ASSERT_EQ(gather->run(a, team), Status::kOk) << what;
            if (me != root) break;
            for (int q = 0; q < p; ++q) {
              auto d = data(q, n, call);
              expected.insert(expected.end(), d.begin(), d.end());
            }
            EXPECT_EQ(out, expected) << what;
            break;
          }
          case 2: {
            const auto all = data(root, n * p, call);
            std::vector<std::int32_t> out(n, -7);
            a.coll = Collective::kScatter;
            a.sendbuf = me == root ? all.data() : nullptr;
            a.recvbuf = out.data();
            ASSERT_EQ(scatter->run(a, team), Status::kOk) << what;
            EXPECT_EQ(out,
                      std::vector<std::int32_t>(all.begin() + me * n, all.begin() + (me + 1) * n))
                << what << " rank " << me;
            break;
          }
          default: {  // a round of the same channel between the posts
            auto buf = me == root ? data(root, n, call) : std::vector<std::int32_t>(n, -7);
            a.coll = Collective::kBcast;
            a.recvbuf = buf.data();
            ASSERT_EQ(rounds->run(a, team), Status::kOk) << what;
            EXPECT_EQ(buf, data(root, n, call)) << what << " rank " << me;
          }
        }
      }
    });
  }
}

// paceCoreDistance (shm/core_distance.h) reads the cores' distance at the first of every
// CoreReading::kEvery calls counted, on both ranks alike (a rank alone in its rounds would wait
// forever), between calls of an algorithm on the same channel: every result stays right, the
// count is the calls', and both ranks hold the same reading.
TEST(CoreDistance, ReadingsKeepBothRanksInStepAndAgree) {
  const Algorithm* cma = findAlgorithm(Collective::kAllreduce, "cma");
  ASSERT_NE(cma, nullptr);
  const UserReduce op = leftBiased();
  const std::uint64_t calls = 2 * CoreReading::kEvery + 1;
  std::atomic<int> wrong{0}, readings{0};
  std::array<CoreDistance, 2> agreed{};
  runTeam(2, [&](Team& team) {
    const int r = team.rank();
    for (std::uint64_t c = 0; c < calls; ++c) {
      const bool due = team.shm->cores().due(2);
      bool changed = false;
      ASSERT_EQ(paceCoreDistance(*team.shm, std::nullopt, &changed), Status::kOk);
      if (due && r == 0) ++readings;
      double in = value(r, c), out = -1;
      CollArgs a = leftBiasedArgs(Collective::kAllreduce, 1, &op);
      a.sendbuf = &in;
      a.recvbuf = &out;
      ASSERT_EQ(cma->run(a, team), Status::kOk);
      if (out != 2 * value(0, c) - value(1, c)) ++wrong;
    }
    EXPECT_EQ(team.shm->cores().calls, calls);
    agreed[static_cast<std::size_t>(r)] = team.shm->cores().agreed;
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(readings.load(), 3);
  EXPECT_NE(agreed[0], CoreDistance::kUnread);
  EXPECT_EQ(agreed[0], agreed[1]);
}

// Each rank's verdict as given (OVERPASS_CORE_DISTANCE), different on the two ranks: both agree
// on far where either says far, the first reading is a change and the next call, not due, none.
TEST(CoreDistance, EitherRanksFarVerdictMakesTheTeamFar) {
  for (bool far0 : {false, true})
    for (bool far1 : {false, true}) {
      const CoreDistance expected = far0 || far1 ? CoreDistance::kFar : CoreDistance::kNear;
      runTeam(2, [&](Team& team) {
        const bool mine = team.rank() == 0 ? far0 : far1;
        bool changed = false;
        ASSERT_EQ(paceCoreDistance(*team.shm, mine, &changed), Status::kOk);
        EXPECT_TRUE(changed);
        EXPECT_EQ(team.shm->cores().agreed, expected)
            << "rank " << team.rank() << " says " << (mine ? "far" : "near");
        ASSERT_EQ(paceCoreDistance(*team.shm, !mine, &changed), Status::kOk);
        EXPECT_FALSE(changed);
        EXPECT_EQ(team.shm->cores().agreed, expected);
        EXPECT_EQ(team.shm->cores().calls, 2u);
      });
    }
}

// Channels of other sizes count their calls but never read: no rounds, kUnread.
TEST(CoreDistance, OnlyTwoRankChannelsRead) {
  for (int p : {1, 3, 4})
    runTeam(p, [&](Team& team) {
      for (int c = 0; c < 3; ++c) {
        bool changed = true;
        ASSERT_EQ(paceCoreDistance(*team.shm, true, &changed), Status::kOk);
        EXPECT_FALSE(changed);
      }
      EXPECT_EQ(team.shm->cores().agreed, CoreDistance::kUnread);
      EXPECT_EQ(team.shm->cores().calls, 3u);
    });
}

// ---- Device algorithms (coll/device/device_ipc.h) on the simulated device ----
// The ranks are threads of one process; each maps its peers' buffers through simulated IPC (the
// peer's memory file opened through /proc), as separate processes do.

// Simulated device memory, filled and read through its host alias.
struct SimBuffer {
  explicit SimBuffer(std::size_t bytes) : p(simulatedDeviceMemory().allocateDevice(bytes)) {}
  ~SimBuffer() { simulatedDeviceMemory().freeDevice(p); }
  SimBuffer(const SimBuffer&) = delete;
  SimBuffer& operator=(const SimBuffer&) = delete;
  unsigned char* host() const { return static_cast<unsigned char*>(overpass_sim_alias(p)); }
  void* p;
};
std::vector<std::unique_ptr<SimBuffer>> simBuffers(int p, std::size_t bytes) {
  std::vector<std::unique_ptr<SimBuffer>> out;
  for (int r = 0; r < p; ++r) out.push_back(std::make_unique<SimBuffer>(bytes));
  return out;
}

// Runs deviceIpc on p ranks, rank r's arguments from `setup`; the status of each rank.
std::vector<Status> runOnDevice(int p, const std::function<void(int, CollArgs&)>& setup,
                                const std::function<void(Team&)>& after = nullptr) {
  std::vector<Status> statuses(p);
  runTeam(p, [&](Team& team) {
    DeviceScratch scratch;
    team.device = &simulatedDeviceMemory();
    team.deviceScratch = &scratch;
    CollArgs a;
    setup(team.rank(), a);
    // As the shim classifies a call's buffers (once per call): all of them on the device?
    auto onDevice = [](const void* p) {
      return simulatedDeviceMemory().classify(p).kind == MemoryKind::kDevice;
    };
    a.onDevice = onDevice(a.recvbuf) && (a.coll == Collective::kBcast || onDevice(a.sendbuf));
    statuses[team.rank()] = deviceIpc(a, team);
    if (after) after(team);
  });
  return statuses;
}

// Every (type, op) with a device kernel, p = 2, 3, 5, in and out of place, slices of 0-8 elements:
// against the serial combination (small integers: exact in any order).
TEST(DeviceIpc, AllreduceEveryTypeAndOperationInAndOutOfPlace) {
  ASSERT_NE(overpass_sim_this_process(), nullptr);
  for (std::size_t t = 0; t < static_cast<std::size_t>(DataType::kCount); ++t)
    for (std::size_t o = 0; o < static_cast<std::size_t>(ReduceOp::kUser); ++o) {
      const auto type = static_cast<DataType>(t);
      const auto op = static_cast<ReduceOp>(o);
      if (!isValidReduction(type, op) || !deviceReducible(type, op)) continue;
      for (int p : {2, 3, 5})
        for (std::size_t n : {1ul, 37ul})
          for (bool inPlace : {false, true}) {
            const std::size_t bytes = n * dataTypeSize(type);
            std::vector<unsigned char> expected = elements(type, 0, n);
            for (int r = 1; r < p; ++r)
              reduceLocal(elements(type, r, n).data(), expected.data(), n, type, op);
            auto send = simBuffers(p, bytes), recv = simBuffers(p, bytes);
            for (int r = 0; r < p; ++r) {
              const auto in = elements(type, r, n);
              std::memcpy((inPlace ? recv : send)[r]->host(), in.data(), bytes);
            }
            const auto statuses = runOnDevice(p, [&](int r, CollArgs& a) {
              a.coll = Collective::kAllreduce;
              a.count = n;
              a.bytes = bytes;
              a.type = type;
              a.op = op;
              a.sendbuf = (inPlace ? recv : send)[r]->p;
              a.recvbuf = recv[r]->p;
            });
            for (int r = 0; r < p; ++r) {
              ASSERT_EQ(statuses[r], Status::kOk);
              EXPECT_EQ(canonical(type, recv[r]->host(), n), canonical(type, expected.data(), n))
                  << dataTypeName(type) << " " << reduceOpName(op) << " p=" << p << " n=" << n
                  << (inPlace ? " in place" : "") << " rank " << r;
            }
          }
    }
}

// Rank order on the device: the bits of the serial left-to-right sum on every rank, with slices
// large enough for many kernels' worth (and the scratch path of in-place ranks from 2 on).
TEST(DeviceIpc, AllreduceGivesTheSerialLeftToRightBits) {
  for (int p : {2, 3, 5})
    for (std::size_t n : {7ul, 1000ul, (1ul << 18) + 3})
      for (bool inPlace : {false, true}) {
        auto input = [&](int r) {
          std::mt19937_64 gen(r * 977 + n);
          std::uniform_real_distribution<double> unit(-1, 1);
          std::uniform_int_distribution<int> exponent(-12, 12);
          std::vector<double> v(n);
          for (double& x : v) x = std::ldexp(unit(gen), exponent(gen) * 3);
          return v;
        };
        std::vector<double> expected = input(0);
        for (int r = 1; r < p; ++r) {
          const auto x = input(r);
          for (std::size_t i = 0; i < n; ++i) expected[i] = expected[i] + x[i];
        }
        const std::size_t bytes = n * sizeof(double);
        auto send = simBuffers(p, bytes), recv = simBuffers(p, bytes);
        for (int r = 0; r < p; ++r)
          std::memcpy((inPlace ? recv : send)[r]->host(), input(r).data(), bytes);
        const auto statuses = runOnDevice(p, [&](int r, CollArgs& a) {
          a.coll = Collective::kAllreduce;
          a.count = n;
          a.bytes = bytes;
          a.type = DataType::kDouble;
          a.sendbuf = (inPlace ? recv : send)[r]->p;
          a.recvbuf = recv[r]->p;
        });
        for (int r = 0; r < p; ++r) {
          ASSERT_EQ(statuses[r], Status::kOk);
          EXPECT_EQ(std::memcmp(recv[r]->host(), expected.data(), bytes), 0)
              << "p=" << p << " n=" << n << (inPlace ? " in place" : "") << " rank " << r;
        }
      }
}

TEST(DeviceIpc, BcastFromEveryRootAndAlltoall) {
  for (int p : {2, 3, 4})
    for (std::size_t bytes : {1ul, 4097ul, 300000ul}) {
      auto buffers = simBuffers(p, bytes);
      for (int root = 0; root < p; ++root) {
        for (int r = 0; r < p; ++r) std::memset(buffers[r]->host(), r == root ? 0 : 0xEE, bytes);
        const auto want = data(root, bytes, 5);
        std::memcpy(buffers[root]->host(), want.data(), bytes);
        // The root reuses its buffer as soon as the call returns: no rank may still read it.
        const auto statuses = runOnDevice(
            p,
            [&](int r, CollArgs& a) {
              a.coll = Collective::kBcast;
              a.bytes = bytes;
              a.root = root;
              a.recvbuf = buffers[r]->p;
            },
            [&](Team& team) {
              if (team.rank() == root) std::memset(buffers[root]->host(), 0x11, bytes);
            });
        for (int r = 0; r < p; ++r) {
          ASSERT_EQ(statuses[r], Status::kOk);
          if (r == root) continue;  // overwritten since
          EXPECT_EQ(std::memcmp(buffers[r]->host(), want.data(), bytes), 0)
              << "bcast p=" << p << " bytes=" << bytes << " root " << root << " rank " << r;
        }
      }
      auto send = simBuffers(p, bytes * p), recv = simBuffers(p, bytes * p);
      for (int r = 0; r < p; ++r) {
        const auto in = data(r, bytes * p, 9);
        std::memcpy(send[r]->host(), in.data(), bytes * p);
        std::memset(recv[r]->host(), 0xEE, bytes * p);
      }
      const auto statuses = runOnDevice(p, [&](int r, CollArgs& a) {
        a.coll = Collective::kAlltoall;
        a.bytes = bytes;
        a.sendbuf = send[r]->p;
        a.recvbuf = recv[r]->p;
      });
      for (int r = 0; r < p; ++r) {
        ASSERT_EQ(statuses[r], Status::kOk);
        for (int q = 0; q < p; ++q)
          EXPECT_EQ(std::memcmp(recv[r]->host() + q * bytes, send[q]->host() + r * bytes, bytes), 0)
              << "alltoall p=" << p << " bytes=" << bytes << " block " << q << " of rank " << r;
      }
    }
}

// One rank's buffers on the host, or without buffers (its datatypes need packing): every rank
// declines, nothing is written, and the channel serves the next call.
TEST(DeviceIpc, EveryRankDeclinesWhereOneCannotTakePart) {
  const int p = 3;
  const std::size_t n = 100, bytes = n * sizeof(std::int32_t);
  for (int cannot : {0, 1, 2})
    for (bool hostBuffers : {true, false}) {
      auto send = simBuffers(p, bytes), recv = simBuffers(p, bytes);
      std::vector<std::vector<std::int32_t>> host(p, std::vector<std::int32_t>(n, 3));
      std::vector<std::vector<std::int32_t>> after(p);
      for (int r = 0; r < p; ++r) {
        for (std::size_t i = 0; i < n; ++i) reinterpret_cast<std::int32_t*>(send[r]->host())[i] = r;
        std::memset(recv[r]->host(), 0xEE, bytes);
      }
      const auto statuses = runOnDevice(
          p,
          [&](int r, CollArgs& a) {
            a.coll = Collective::kAllreduce;
            a.count = n;
            a.bytes = bytes;
            a.type = DataType::kInt32;
            if (r != cannot) {
              a.sendbuf = send[r]->p;
              a.recvbuf = recv[r]->p;
            } else if (hostBuffers) {
              a.sendbuf = a.recvbuf = host[r].data();
            }
          },
          [&](Team& team) {  // the shm allreduce after it, on the same channel
            std::vector<std::int32_t> in(n, team.rank() + 1), out(n);
            CollArgs a;
            a.coll = Collective::kAllreduce;
            a.count = n;
            a.bytes = bytes;
            a.type = DataType::kInt32;
            a.sendbuf = in.data();
            a.recvbuf = out.data();
            ASSERT_EQ(findAlgorithm(Collective::kAllreduce, "shm")->run(a, team), Status::kOk);
            after[team.rank()] = out;
          });
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(statuses[r], Status::kDeclined) << "rank " << r << " cannot " << cannot;
        EXPECT_EQ(after[r], std::vector<std::int32_t>(n, 6));
        const unsigned char* out = recv[r]->host();
        EXPECT_TRUE(std::all_of(out, out + bytes, [](unsigned char c) { return c == 0xEE; }));
        EXPECT_EQ(host[r], std::vector<std::int32_t>(n, 3));
      }
    }
}

// Data movement at ~1M elements (4 MiB blocks for bcast; 1M in total for the block
// collectives), where pipelines chunk and trees forward big subtrees: every algorithm, p = 3, 4.
TEST(DataMovement, EveryAlgorithmOnAMillionElements) {
  const std::size_t total = (1u << 20) + 5;
  for (const Algorithm& alg : algorithms()) {
    if (alg.isPmpi() || alg.kind != AlgorithmKind::kHost || isReduction(alg.coll) ||
        alg.coll == Collective::kBarrier || !fixedCount(alg.coll))
      continue;
    for (int p : {3, 4}) {
      const int root = p - 1;
      const std::size_t n = alg.coll == Collective::kBcast ? total : total / p;  // block
      const std::size_t bytes = n * sizeof(std::int32_t);
      std::vector<std::vector<std::int32_t>> inputs(p);
      for (int r = 0; r < p; ++r)
        inputs[r] = data(
            r, alg.coll == Collective::kScatter || alg.coll == Collective::kAlltoall ? n * p : n,
            3);
      runTeam(p, [&](Team& team) {
        const int me = team.rank();
        std::vector<std::int32_t> out(alg.coll == Collective::kBcast ? n : n * p, -7);
        CollArgs a;
        a.coll = alg.coll;
        a.bytes = bytes;
        a.root = root;
        a.sendbuf = inputs[me].data();
        a.recvbuf = out.data();
        if (alg.coll == Collective::kBcast) {
          if (me == root) out = inputs[root];
        }
        if (alg.coll == Collective::kScatter) out.resize(n);
        if (declined(alg, a, team)) return;
        std::vector<std::int32_t> expected;
        switch (alg.coll) {
          case Collective::kBcast:
            expected = inputs[root];
            break;
          case Collective::kScatter:
            expected.assign(inputs[root].begin() + me * n, inputs[root].begin() + (me + 1) * n);
            break;
          case Collective::kAlltoall:
            for (int r = 0; r < p; ++r)
              expected.insert(expected.end(), inputs[r].begin() + me * n,
                              inputs[r].begin() + (me + 1) * n);
            break;
          default:  // gather (checked at the root), allgather
            for (int r = 0; r < p; ++r)
              expected.insert(expected.end(), inputs[r].begin(), inputs[r].end());
        }
        if (alg.coll != Collective::kGather || me == root) {
          EXPECT_TRUE(out == expected)
              << collectiveName(alg.coll) << " " << alg.name << " p=" << p << " rank " << me;
        }
      });
    }
  }
}

// The hierarchical allreduce on teams spread over nodes, equal and unequal, contiguous and
// round-robin, where its three sub-group steps run (elsewhere it is recursive doubling).
TEST(Hierarchical, AllreduceOverNodesMatchesSerialSumAndIsBitwiseIdentical) {
  const Algorithm& alg = *findAlgorithm(Collective::kAllreduce, "hierarchical");
  for (const NodeLayout& layout : layoutsOver({{2, 2}, {2, 3}, {3, 2}, {4, 2}, {2, 4}, {3, 3}})) {
    const Topology& topo = layout.topo;
    const int p = topo.size();
    // Fewer elements than ranks on a node (1, S - 1) too: some ranks own no slice.
    for (std::size_t n : {std::size_t{1}, static_cast<std::size_t>(topo.maxRanksPerNode() - 1),
                          static_cast<std::size_t>(topo.maxRanksPerNode()), std::size_t{7},
                          std::size_t{1001}, std::size_t{1} << 16})
      for (int variant = 0; variant < 4; ++variant) {
        const bool inPlace = variant % 2, nodeShm = variant / 2;
        const auto expected = sumOver(p, n);
        runOverNodes(topo, nodeShm, [&](Team& team) {
          auto in = data(team.rank(), n);
          std::vector<std::int32_t> out(n, -7);
          if (inPlace) out = in;
          CollArgs a = reductionArgs(Collective::kAllreduce, n);
          a.sendbuf = inPlace ? out.data() : in.data();
          a.recvbuf = out.data();
          ASSERT_EQ(alg.run(a, team), Status::kOk);
          EXPECT_EQ(out, expected)
              << layout.name << (nodeShm ? " shm" : "") << " n=" << n << " rank " << team.rank();
        });
      }
    for (bool nodeShm : {false, true}) {
      std::vector<std::vector<double>> results(p);
      runOverNodes(topo, nodeShm, [&](Team& team) {
        std::mt19937_64 gen(team.rank() + 11);
        std::uniform_real_distribution<double> dist(-1, 1);
        std::vector<double> in(999), out(999);
        for (auto& x : in) x = dist(gen) * 1e6;
        CollArgs a;
        a.coll = Collective::kAllreduce;
        a.count = in.size();
        a.bytes = in.size() * sizeof(double);
        a.type = DataType::kDouble;
        a.sendbuf = in.data();
        a.recvbuf = out.data();
        ASSERT_EQ(alg.run(a, team), Status::kOk);
        results[team.rank()] = out;
      });
      for (int r = 1; r < p; ++r) EXPECT_EQ(results[r], results[0]) << layout.name << " rank " << r;
    }
  }
}

TEST(Hierarchical, ReduceOverNodesToEveryRoot) {
  const Algorithm& alg = *findAlgorithm(Collective::kReduce, "hierarchical");
  for (const NodeLayout& layout : layoutsOver({{2, 2}, {3, 2}, {2, 3}})) {
    const Topology& topo = layout.topo;
    const int p = topo.size();
    for (std::size_t n :
         {static_cast<std::size_t>(topo.maxRanksPerNode()), std::size_t{1001}, std::size_t{70000}})
      for (int root = 0; root < p; ++root)
        for (int variant = 0; variant < 4; ++variant) {
          const bool inPlace = variant % 2, nodeShm = variant / 2;
          const auto expected = sumOver(p, n);
          runOverNodes(topo, nodeShm, [&](Team& team) {
            const bool isRoot = team.rank() == root;
            auto in = data(team.rank(), n);
            const auto untouched = std::vector<std::int32_t>(n, -7);
            std::vector<std::int32_t> out = inPlace && isRoot ? in : untouched;
            CollArgs a = reductionArgs(Collective::kReduce, n);
            a.sendbuf = inPlace && isRoot ? out.data() : in.data();
            a.recvbuf = out.data();
            a.root = root;
            ASSERT_EQ(alg.run(a, team), Status::kOk);
            EXPECT_EQ(out, isRoot ? expected : untouched)
                << layout.name << (nodeShm ? " shm" : "") << " n=" << n << " root " << root
                << " rank " << team.rank();
          });
        }
  }
}

// Gather and scatter over nodes: every block in its place whatever the layout and the root.
TEST(Hierarchical, GatherAndScatterOverNodesForEveryRoot) {
  const Algorithm& gather = *findAlgorithm(Collective::kGather, "hierarchical");
  const Algorithm& scatter = *findAlgorithm(Collective::kScatter, "hierarchical");
  for (const NodeLayout& layout : layoutsOver({{2, 2}, {3, 2}, {2, 3}})) {
    const Topology& topo = layout.topo;
    const int p = topo.size();
    for (std::size_t n : {std::size_t{1}, std::size_t{1001}})
      for (int root = 0; root < p; ++root)
        for (int variant = 0; variant < 4; ++variant) {
          const bool inPlace = variant % 2, nodeShm = variant / 2;
          const std::string where = layout.name + (nodeShm ? " shm" : "") +
                                    (inPlace ? " in place" : "") + " n=" + std::to_string(n) +
                                    " root " + std::to_string(root);
          std::vector<std::int32_t> all;  // block r = data(r, n)
          for (int r = 0; r < p; ++r) {
            const auto block = data(r, n);
            all.insert(all.end(), block.begin(), block.end());
          }
          runOverNodes(topo, nodeShm, [&](Team& team) {
            const int r = team.rank();
            const bool isRoot = r == root;
            auto mine = data(r, n);
            std::vector<std::int32_t> gathered(isRoot ? n * p : 0, -7);
            // In place: the root's block is already at its place in recvbuf.
            if (isRoot && inPlace) std::copy(mine.begin(), mine.end(), gathered.begin() + r * n);
            CollArgs g;
            g.coll = Collective::kGather;
            g.sendbuf = isRoot && inPlace ? gathered.data() + r * n : mine.data();
            g.recvbuf = gathered.data();
            g.bytes = n * sizeof(std::int32_t);
            g.root = root;
            ASSERT_EQ(gather.run(g, team), Status::kOk);
            if (isRoot) {
              EXPECT_EQ(gathered, all) << "gather " << where;
            }
            std::vector<std::int32_t> source = isRoot ? all : std::vector<std::int32_t>{};
            std::vector<std::int32_t> got(n, -7);
            CollArgs s = g;
            s.coll = Collective::kScatter;
            s.sendbuf = isRoot ? source.data() : nullptr;
            // In place: the root's block stays where it is in sendbuf.
            s.recvbuf = isRoot && inPlace ? source.data() + r * n : got.data();
            ASSERT_EQ(scatter.run(s, team), Status::kOk);
            if (isRoot && inPlace) {
              EXPECT_EQ(source, all) << "scatter " << where;
            } else {
              EXPECT_EQ(got, mine) << "scatter " << where << " rank " << r;
            }
          });
        }
  }
}

TEST(Hierarchical, BcastOverNodesFromEveryRoot) {
  const Algorithm& alg = *findAlgorithm(Collective::kBcast, "hierarchical");
  for (const NodeLayout& layout : layoutsOver({{2, 2}, {3, 2}, {2, 3}})) {
    const Topology& topo = layout.topo;
    const int p = topo.size();
    for (std::size_t n : {std::size_t{1}, std::size_t{1001}, std::size_t{70000}})
      for (int root = 0; root < p; ++root)
        for (bool nodeShm : {false, true}) {
          const auto expected = data(root, n);
          runOverNodes(topo, nodeShm, [&](Team& team) {
            std::vector<std::int32_t> buf =
                team.rank() == root ? expected : std::vector<std::int32_t>(n, -7);
            CollArgs a;
            a.coll = Collective::kBcast;
            a.recvbuf = buf.data();
            a.bytes = n * sizeof(std::int32_t);
            a.root = root;
            ASSERT_EQ(alg.run(a, team), Status::kOk);
            EXPECT_TRUE(buf == expected)
                << layout.name << " root " << root << (nodeShm ? " shm" : "") << " n=" << n;
          });
        }
  }
}

// Proof that the hierarchical steps run on unequal nodes (not the flat algorithm each falls back
// to): over two nodes, whatever their sizes, the bytes each node sends to the other are those of
// the plan. Allreduce: one copy of the vector each way (each slice once, from its owner). Reduce:
// the vector from the root's other node, nothing towards it. Bcast: the message once from the
// root's node. Gather and scatter: the other node's blocks, once. The flat algorithms send more
// (checked for the allreduce's fallback, recursive doubling, on 3+1, so that the check can fail).
TEST(Hierarchical, OverTwoUnequalNodesEachNodeSendsWhatThePlanSays) {
  const Algorithm& allreduce = *findAlgorithm(Collective::kAllreduce, "hierarchical");
  const Algorithm& flat = *findAlgorithm(Collective::kAllreduce, "recursive_doubling");
  const Algorithm& reduce = *findAlgorithm(Collective::kReduce, "hierarchical");
  const Algorithm& bcast = *findAlgorithm(Collective::kBcast, "hierarchical");
  const Algorithm& gather = *findAlgorithm(Collective::kGather, "hierarchical");
  const Algorithm& scatter = *findAlgorithm(Collective::kScatter, "hierarchical");
  const std::size_t n = 999;
  const std::size_t bytes = n * sizeof(std::int32_t);
  for (const NodeLayout& layout :
       {NodeLayout{"3+1", placed({0, 0, 0, 1})}, NodeLayout{"1+2", placed({0, 1, 1})},
        NodeLayout{"3+1 rr", placed({0, 1, 0, 0})}, NodeLayout{"2+3 rr", placed({0, 1, 0, 1, 1})}})
    for (bool nodeShm : {false, true}) {
      const Topology& topo = layout.topo;
      const std::string where = layout.name + (nodeShm ? " shm" : "");
      auto across = [&](const Algorithm& alg, int root) {
        std::atomic<std::size_t> from[2] = {0, 0};
        runOverNodes(
            topo, nodeShm,
            [&](Team& team) {
              const int r = team.rank();
              auto in = data(r, n);
              std::vector<std::int32_t> out(n * topo.size(), -7), all(n * topo.size(), 1);
              CollArgs a = reductionArgs(alg.coll, n);
              a.root = root;
              a.sendbuf = alg.coll == Collective::kScatter ? all.data() : in.data();
              a.recvbuf = alg.coll == Collective::kBcast ? in.data() : out.data();
              ASSERT_EQ(alg.run(a, team), Status::kOk);
            },
            from);
        return std::pair<std::size_t, std::size_t>{from[0], from[1]};
      };
      EXPECT_EQ(across(allreduce, 0), std::pair(bytes, bytes)) << where;
      // One element: it still crosses once each way, from the one rank per node that owns it.
      {
        std::atomic<std::size_t> from[2] = {0, 0};
        runOverNodes(
            topo, nodeShm,
            [&](Team& team) {
              std::int32_t in = team.rank() + 1, out = -7;
              CollArgs a = reductionArgs(Collective::kAllreduce, 1);
              a.sendbuf = &in;
              a.recvbuf = &out;
              ASSERT_EQ(allreduce.run(a, team), Status::kOk);
              EXPECT_EQ(out, topo.size() * (topo.size() + 1) / 2) << where;
            },
            from);
        EXPECT_EQ(from[0].load(), sizeof(std::int32_t)) << where << " one element";
        EXPECT_EQ(from[1].load(), sizeof(std::int32_t)) << where << " one element";
      }
      // On 3+1, both exchanges of recursive doubling leave the node of one rank: 2n bytes.
      if (topo.size() == 4) {
        EXPECT_NE(across(flat, 0), std::pair(bytes, bytes)) << where;
      }
      for (int root = 0; root < topo.size(); ++root) {
        const int rootNode = topo.nodeOf(root), other = 1 - rootNode;
        const std::size_t otherBlocks = topo.nodeSize(other) * bytes;
        auto expect = [&](std::size_t fromRootNode, std::size_t fromOther) {
          return rootNode == 0 ? std::pair(fromRootNode, fromOther)
                               : std::pair(fromOther, fromRootNode);
        };
        const std::string at = where + " root " + std::to_string(root);
        EXPECT_EQ(across(reduce, root), expect(0, bytes)) << "reduce " << at;
        EXPECT_EQ(across(bcast, root), expect(bytes, 0)) << "bcast " << at;
        EXPECT_EQ(across(gather, root), expect(0, otherBlocks)) << "gather " << at;
        EXPECT_EQ(across(scatter, root), expect(otherBlocks, 0)) << "scatter " << at;
      }
    }
}

OVERPASS_ALGORITHM_SUITE(Bcast, Collective::kBcast);
TEST_P(Bcast, EveryRankGetsTheRootsData) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      for (int root = 0; root < p; ++root) {
        const auto expected = data(root, n);
        runTeam(p, [&](Team& team) {
          std::vector<std::int32_t> buf =
              team.rank() == root ? data(root, n) : std::vector<std::int32_t>(n, -7);
          CollArgs a;
          a.coll = Collective::kBcast;
          a.recvbuf = buf.data();
          a.bytes = n * sizeof(std::int32_t);
          a.root = root;
          if (declined(*GetParam(), a, team)) return;
          EXPECT_EQ(buf, expected) << "p=" << p << " n=" << n << " root " << root;
        });
      }
}

OVERPASS_ALGORITHM_SUITE(Gather, Collective::kGather);
TEST_P(Gather, RootGetsEveryBlockInRankOrder) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      for (int root = 0; root < p; ++root) {
        std::vector<std::int32_t> expected;
        for (int r = 0; r < p; ++r) {
          auto d = data(r, n);
          expected.insert(expected.end(), d.begin(), d.end());
        }
        runTeam(p, [&](Team& team) {
          auto in = data(team.rank(), n);
          const bool isRoot = team.rank() == root;
          const bool inPlace = isRoot && root % 2 == 1;
          std::vector<std::int32_t> out(isRoot ? n * p : 0, -7);
          if (inPlace) std::copy(in.begin(), in.end(), out.begin() + root * n);
          CollArgs a;
          a.coll = Collective::kGather;
          a.root = root;
          a.bytes = n * sizeof(std::int32_t);
          a.sendbuf = inPlace ? out.data() + root * n : in.data();
          a.recvbuf = isRoot ? out.data() : nullptr;
          if (declined(*GetParam(), a, team)) return;
          if (isRoot) {
            EXPECT_EQ(out, expected) << "p=" << p << " n=" << n << " root " << root;
          }
        });
      }
}

OVERPASS_ALGORITHM_SUITE(Scatter, Collective::kScatter);
TEST_P(Scatter, EachRankGetsItsBlock) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      for (int root = 0; root < p; ++root) {
        const auto all = data(root, n * p, 1);
        runTeam(p, [&](Team& team) {
          const bool isRoot = team.rank() == root;
          const bool inPlace = isRoot && root % 2 == 1;
          std::vector<std::int32_t> in = isRoot ? all : std::vector<std::int32_t>();
          std::vector<std::int32_t> out(n, -7);
          CollArgs a;
          a.coll = Collective::kScatter;
          a.root = root;
          a.bytes = n * sizeof(std::int32_t);
          a.sendbuf = isRoot ? in.data() : nullptr;
          a.recvbuf = inPlace ? in.data() + root * n : out.data();
          if (declined(*GetParam(), a, team)) return;
          const std::vector<std::int32_t> mine(all.begin() + team.rank() * n,
                                               all.begin() + (team.rank() + 1) * n);
          if (inPlace) {
            EXPECT_EQ(in, all) << "in-place scatter must leave the root's buffer intact";
          } else {
            EXPECT_EQ(out, mine) << "p=" << p << " n=" << n << " root " << root;
          }
        });
      }
}

OVERPASS_ALGORITHM_SUITE(Allgather, Collective::kAllgather);
TEST_P(Allgather, EveryRankGetsEveryBlock) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      for (bool inPlace : {false, true}) {
        std::vector<std::int32_t> expected;
        for (int r = 0; r < p; ++r) {
          auto d = data(r, n);
          expected.insert(expected.end(), d.begin(), d.end());
        }
        runTeam(p, [&](Team& team) {
          auto in = data(team.rank(), n);
          std::vector<std::int32_t> out(n * p, -7);
          if (inPlace) std::copy(in.begin(), in.end(), out.begin() + team.rank() * n);
          CollArgs a;
          a.coll = Collective::kAllgather;
          a.bytes = n * sizeof(std::int32_t);
          a.sendbuf = inPlace ? out.data() + team.rank() * n : in.data();
          a.recvbuf = out.data();
          if (declined(*GetParam(), a, team)) return;
          EXPECT_EQ(out, expected) << "p=" << p << " n=" << n;
        });
      }
}

OVERPASS_ALGORITHM_SUITE(Alltoall, Collective::kAlltoall);
TEST_P(Alltoall, BlockJOfRankIGoesToBlockIOfRankJ) {
  for (int p : kSizes)
    for (std::size_t n : countsFor(p))
      runTeam(p, [&](Team& team) {
        auto in = data(team.rank(), n * p, 2);
        std::vector<std::int32_t> out(n * p, -7), expected;
        for (int r = 0; r < p; ++r) {
          auto d = data(r, n * p, 2);
          expected.insert(expected.end(), d.begin() + team.rank() * n,
                          d.begin() + (team.rank() + 1) * n);
        }
        CollArgs a;
        a.coll = Collective::kAlltoall;
        a.bytes = n * sizeof(std::int32_t);
        a.sendbuf = in.data();
        a.recvbuf = out.data();
        if (declined(*GetParam(), a, team)) return;
        EXPECT_EQ(out, expected) << "p=" << p << " n=" << n;
      });
}

OVERPASS_ALGORITHM_SUITE(Barrier, Collective::kBarrier);
TEST_P(Barrier, NoRankLeavesBeforeAllArrived) {
  for (int p : kSizes)
    for (int round = 0; round < 5; ++round) {
      std::atomic<int> arrived{0};
      runTeam(p, [&](Team& team) {
        if (team.rank() == round % p) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        arrived.fetch_add(1);
        CollArgs a;
        a.coll = Collective::kBarrier;
        if (declined(*GetParam(), a, team)) return;
        EXPECT_EQ(arrived.load(), p) << "p=" << p;
      });
    }
}

}  // namespace
}  // namespace overpass

namespace overpass {
namespace {

// Buffers of one rank for any collective: room for p blocks on both sides, the send side filled
// with the rank's data, the receive side with a marker (the root's bcast buffer with its data).
struct AnyBuffers {
  std::vector<unsigned char> send, recv;
  AnyBuffers(const CollArgs& a, int p, int rank) {
    const std::size_t room = std::max<std::size_t>(a.bytes, 1) * p;
    send.resize(room);
    for (std::size_t i = 0; i < room; ++i) send[i] = static_cast<unsigned char>(rank * 31 + i);
    recv.assign(room, 0xEE);
    if (a.coll == Collective::kBcast && rank == a.root) recv = send;
  }
};

// One owner per decision: an algorithm run directly on a call its registry entry does not serve
// either declines on every rank having written nothing, or runs on every rank (where `serves`
// only steers the selector away from a slow case; the suites above check those results); never
// a mix of ranks. The six that used to run another algorithm in their place decline.
TEST(Declines, EveryAlgorithmServesOrDeclinesAlikeOnEveryRank) {
  int declines = 0;
  for (const Algorithm& alg : algorithms()) {
    if (alg.kind != AlgorithmKind::kHost || !alg.serves || !fixedCount(alg.coll)) continue;
    for (int p : kSizes)
      for (std::size_t n : countsFor(p)) {
        CollArgs a;
        a.coll = alg.coll;
        a.count = n;
        a.bytes = n * sizeof(std::int32_t);
        a.type = DataType::kInt32;
        a.root = p - 1;
        std::vector<Status> statuses(p, Status::kInternal);
        std::vector<char> untouched(p, 0);
        bool served = true;
        runTeam(p, [&](Team& team) {
          const int r = team.rank();
          if (r == 0) served = alg.serves(shapeOf(a, team));
          AnyBuffers b(a, p, r);
          const AnyBuffers before = b;
          CollArgs mine = a;
          mine.sendbuf = b.send.data();
          mine.recvbuf = b.recv.data();
          statuses[r] = alg.run(mine, team);
          untouched[r] = b.send == before.send && b.recv == before.recv;
        });
        if (served) continue;
        const std::string what = std::string(collectiveName(alg.coll)) + " " +
                                 std::string(alg.name) + " p=" + std::to_string(p) +
                                 " n=" + std::to_string(n);
        for (int r = 0; r < p; ++r) {
          EXPECT_EQ(statuses[r], statuses[0]) << what << ": ranks disagree, rank " << r;
          EXPECT_TRUE(statuses[r] == Status::kOk || statuses[r] == Status::kDeclined)
              << what << " rank " << r;
          if (statuses[r] == Status::kDeclined) {
            EXPECT_TRUE(untouched[r]) << what << ": declined after writing, rank " << r;
          }
        }
        declines += statuses[0] == Status::kDeclined;
      }
  }
  EXPECT_GT(declines, 0);
  // The six: hierarchical ones off several nodes (no topology here), recursive doubling's
  // allgather on a team that is not a power of two.
  for (Collective coll : {Collective::kAllreduce, Collective::kBcast, Collective::kGather,
                          Collective::kScatter, Collective::kReduce})
    runTeam(4, [&](Team& team) {
      std::vector<std::int32_t> in(64, 1), out(64 * 4, -7);
      const auto before = out;
      CollArgs a = reductionArgs(coll, 16);
      a.sendbuf = in.data();
      a.recvbuf = out.data();
      EXPECT_EQ(findAlgorithm(coll, "hierarchical")->run(a, team), Status::kDeclined)
          << collectiveName(coll);
      EXPECT_EQ(out, before) << collectiveName(coll);
    });
  runTeam(3, [&](Team& team) {
    std::vector<std::int32_t> in(4, team.rank()), out(12, -7);
    CollArgs a;
    a.coll = Collective::kAllgather;
    a.bytes = 16;
    a.sendbuf = in.data();
    a.recvbuf = out.data();
    EXPECT_EQ(findAlgorithm(Collective::kAllgather, "recursive_doubling")->run(a, team),
              Status::kDeclined);
    EXPECT_EQ(out, std::vector<std::int32_t>(12, -7));
  });
}

// Preconditions hold to shared inputs only: where rank-local facts differ between ranks (the
// root alone in place, as MPI allows for reduce, gather and scatter; buffers misaligned for
// their element type on some ranks only), every algorithm still gives the right result, or
// declines on every rank alike.
TEST(Declines, RankLocalFactsThatDifferBetweenRanksChangeNothing) {
  for (const Algorithm& alg : algorithms()) {
    if (alg.kind != AlgorithmKind::kHost || alg.coll == Collective::kBarrier ||
        !fixedCount(alg.coll))
      continue;
    for (int p : {3, 4, 5})
      for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
        const int root = 1;
        const std::size_t bytes = n * sizeof(std::int32_t);
        const bool blocks = alg.coll == Collective::kScatter || alg.coll == Collective::kAlltoall ||
                            alg.coll == Collective::kReduceScatterBlock;
        std::vector<std::vector<std::int32_t>> inputs(p);
        for (int r = 0; r < p; ++r) inputs[r] = data(r, blocks ? n * p : n, 5);
        std::vector<Status> statuses(p, Status::kInternal);
        std::vector<std::vector<std::int32_t>> results(p);
        runTeam(p, [&](Team& team) {
          const int r = team.rank();
          const bool isRoot = r == root;
          // Odd ranks' buffers start 4 bytes past a 16-byte boundary (vector loads and stores
          // unaligned there only).
          const std::size_t skew = 4 * (r % 2);
          std::vector<unsigned char> sendRaw(bytes * p + 4), recvRaw(bytes * p + 4, 0xEE);
          unsigned char* send = sendRaw.data() + skew;
          unsigned char* recv = recvRaw.data() + skew;
          std::memcpy(send, inputs[r].data(), inputs[r].size() * sizeof(std::int32_t));
          CollArgs a;
          a.coll = alg.coll;
          a.count = n;
          a.bytes = bytes;
          a.type = DataType::kInt32;
          a.op = ReduceOp::kSum;
          a.root = root;
          a.sendbuf = send;
          a.recvbuf = recv;
          std::size_t resultBytes = bytes;  // what the rank holds afterwards, at `result`
          const unsigned char* result = recv;
          switch (alg.coll) {
            case Collective::kReduce:  // in place at the root, recvbuf unused elsewhere
              if (isRoot) {
                std::memcpy(recv, send, bytes);
                a.sendbuf = recv;
              } else {
                a.recvbuf = nullptr;
              }
              break;
            case Collective::kGather:  // in place at the root
              resultBytes = isRoot ? bytes * p : 0;
              if (isRoot) {
                std::memcpy(recv + r * bytes, send, bytes);
                a.sendbuf = recv + r * bytes;
              }
              break;
            case Collective::kScatter:  // in place at the root: its block stays in sendbuf
              if (isRoot) {
                a.recvbuf = send + r * bytes;
                result = send + r * bytes;
              }
              break;
            case Collective::kBcast:
              if (isRoot) std::memcpy(recv, send, bytes);
              break;
            case Collective::kAllgather:
            case Collective::kAlltoall:
              resultBytes = bytes * p;
              break;
            default:
              break;
          }
          statuses[r] = alg.run(a, team);
          results[r].resize(resultBytes / sizeof(std::int32_t));
          std::memcpy(results[r].data(), result, resultBytes);
        });
        const std::string what = std::string(collectiveName(alg.coll)) + " " +
                                 std::string(alg.name) + " p=" + std::to_string(p) +
                                 " n=" + std::to_string(n);
        for (int r = 0; r < p; ++r) EXPECT_EQ(statuses[r], statuses[0]) << what << " rank " << r;
        if (statuses[0] != Status::kOk) {
          EXPECT_EQ(statuses[0], Status::kDeclined) << what;
          continue;
        }
        for (int r = 0; r < p; ++r) {
          std::vector<std::int32_t> expected;
          switch (alg.coll) {
            case Collective::kAllreduce:
            case Collective::kReduce:
              expected.assign(n, 0);
              for (int q = 0; q < p; ++q)
                for (std::size_t i = 0; i < n; ++i) expected[i] += inputs[q][i];
              break;
            case Collective::kReduceScatterBlock: {
              for (std::size_t i = 0; i < n; ++i) {
                std::int32_t s = 0;
                for (int q = 0; q < p; ++q) s += inputs[q][r * n + i];
                expected.push_back(s);
              }
              break;
            }
            case Collective::kBcast:
              expected = inputs[root];
              break;
            case Collective::kGather:
            case Collective::kAllgather:
              if (alg.coll == Collective::kGather && r != root) break;
              for (int q = 0; q < p; ++q)
                expected.insert(expected.end(), inputs[q].begin(), inputs[q].end());
              break;
            case Collective::kScatter:
              expected.assign(inputs[root].begin() + r * n, inputs[root].begin() + (r + 1) * n);
              break;
            case Collective::kAlltoall:
              for (int q = 0; q < p; ++q)
                expected.insert(expected.end(), inputs[q].begin() + r * n,
                                inputs[q].begin() + (r + 1) * n);
              break;
            default:
              break;
          }
          if (alg.coll == Collective::kReduce && r != root) continue;
          EXPECT_EQ(results[r], expected) << what << " rank " << r;
        }
      }
  }
}

}  // namespace
}  // namespace overpass
