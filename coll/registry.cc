#include "coll/registry.h"

#include <array>

#include "coll/algorithms.h"
#include "common/stats.h"

namespace overpass {
namespace {

using enum Collective;

#define OVERPASS_PMPI(c)                                                 \
  Algorithm {                                                            \
    c, kPmpiName, "the MPI library's own implementation (PMPI)", nullptr \
  }

constexpr std::array kAlgorithms = {
    OVERPASS_PMPI(kAllreduce),
    Algorithm{kAllreduce, "recursive_doubling",
              "log2(p) pairwise exchanges of the whole vector; non-power-of-two ranks fold in",
              allreduceRecursiveDoubling},
    Algorithm{kAllreduce, "ring",
              "reduce-scatter then allgather around a ring, n/p per step: for large vectors",
              allreduceRing},
    OVERPASS_PMPI(kBcast),
    Algorithm{kBcast, "binomial", "binomial tree from the root", bcastBinomial},
    OVERPASS_PMPI(kScatter),
    Algorithm{kScatter, "linear", "the root sends each rank its block", scatterLinear},
    OVERPASS_PMPI(kGather),
    Algorithm{kGather, "linear", "every rank sends its block to the root", gatherLinear},
    OVERPASS_PMPI(kAlltoall),
    Algorithm{kAlltoall, "pairwise", "p-1 exchange steps, step s pairs rank r with r+s and r-s",
              alltoallPairwise},
    OVERPASS_PMPI(kReduce),
    Algorithm{kReduce, "binomial", "binomial tree towards the root (commutative operations)",
              reduceBinomial},
    OVERPASS_PMPI(kAllgather),
    Algorithm{kAllgather, "ring", "p-1 steps around a ring, one block per step", allgatherRing},
    OVERPASS_PMPI(kReduceScatterBlock),
    Algorithm{kReduceScatterBlock, "ring",
              "p-1 steps around a ring, each reducing one block into the travelling partial sum",
              reduceScatterBlockRing},
    OVERPASS_PMPI(kBarrier),
    Algorithm{kBarrier, "dissemination", "ceil(log2(p)) rounds of zero-byte messages",
              barrierDissemination},
};
static_assert(kAlgorithms.size() <= kMaxAlgorithms);

#undef OVERPASS_PMPI

constexpr std::array<std::string_view, kAlgorithms.size()> makeNames() {
  std::array<std::string_view, kAlgorithms.size()> names{};
  for (std::size_t i = 0; i < kAlgorithms.size(); ++i) names[i] = kAlgorithms[i].name;
  return names;
}
constexpr auto kNames = makeNames();

}  // namespace

std::span<const Algorithm> algorithms() {
  return kAlgorithms;
}

std::size_t algorithmId(const Algorithm& a) {
  return &a - kAlgorithms.data();
}

const Algorithm* findAlgorithm(Collective coll, std::string_view name) {
  for (const Algorithm& a : kAlgorithms)
    if (a.coll == coll && a.name == name) return &a;
  return nullptr;
}

const Algorithm& pmpiAlgorithm(Collective coll) {
  return *findAlgorithm(coll, kPmpiName);
}

std::span<const std::string_view> algorithmNames() {
  return kNames;
}

}  // namespace overpass
