// The collectives Overpass knows, by kind. This is the one list of collective kinds: the enum,
// the names (statistics, OVERPASS_COLLS, the tune grammar), the OVERPASS_<COLLECTIVE> variables
// of common/config.cc and their help texts all come from it, so a new collective is one line here.
// The shim's interception list (shim/intercepted.def) names the MPI entry points for each of them.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace overpass {

// X(enumerator, name, NAME): the name in lower case (as users write it) and in upper case (as in
// OVERPASS_<COLLECTIVE>), both string literals, so that texts can be built from them at compile
// time.
#define OVERPASS_COLLECTIVES(X)                                          \
  X(kAllreduce, "allreduce", "ALLREDUCE")                                \
  X(kBcast, "bcast", "BCAST")                                            \
  X(kScatter, "scatter", "SCATTER")                                      \
  X(kGather, "gather", "GATHER")                                         \
  X(kAlltoall, "alltoall", "ALLTOALL")                                   \
  X(kReduce, "reduce", "REDUCE")                                         \
  X(kAllgather, "allgather", "ALLGATHER")                                \
  X(kReduceScatterBlock, "reduce_scatter_block", "REDUCE_SCATTER_BLOCK") \
  X(kBarrier, "barrier", "BARRIER")                                      \
  X(kAllgatherv, "allgatherv", "ALLGATHERV")                             \
  X(kAlltoallv, "alltoallv", "ALLTOALLV")                                \
  X(kGatherv, "gatherv", "GATHERV")                                      \
  X(kScatterv, "scatterv", "SCATTERV")                                   \
  X(kReduceScatter, "reduce_scatter", "REDUCE_SCATTER")                  \
  X(kScan, "scan", "SCAN")                                               \
  X(kExscan, "exscan", "EXSCAN")

enum class Collective : int {
#define OVERPASS_X(id, name, NAME) id,
  OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
};

inline constexpr std::size_t kNumCollectives = 0
#define OVERPASS_X(id, name, NAME) +1
    OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
    ;

inline constexpr std::array<std::string_view, kNumCollectives> kCollectiveNames = {
#define OVERPASS_X(id, name, NAME) name,
    OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
};

namespace detail {
// Every name followed by ", ".
inline constexpr char kCollectiveListText[] =
#define OVERPASS_X(id, name, NAME) name ", "
    OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
    ;
}  // namespace detail

// The names in list order, joined by ", " (for help texts and messages; not followed by a NUL).
inline constexpr std::string_view kCollectiveList(detail::kCollectiveListText,
                                                  sizeof(detail::kCollectiveListText) - 3);

constexpr std::string_view collectiveName(Collective c) {
  return kCollectiveNames[static_cast<std::size_t>(c)];
}

constexpr std::size_t index(Collective c) {
  return static_cast<std::size_t>(c);
}

inline std::optional<Collective> collectiveFromName(std::string_view name) {
  for (std::size_t i = 0; i < kNumCollectives; ++i)
    if (kCollectiveNames[i] == name) return static_cast<Collective>(i);
  return std::nullopt;
}

// True for the collectives that combine data with a reduction operation.
constexpr bool isReduction(Collective c) {
  return c == Collective::kAllreduce || c == Collective::kReduce ||
         c == Collective::kReduceScatterBlock || c == Collective::kReduceScatter ||
         c == Collective::kScan || c == Collective::kExscan;
}

// True for the vector collectives: a count (and a displacement) per rank, which only some ranks
// may know (coll/coll_args.h, BlockLayout).
constexpr bool isVector(Collective c) {
  return c == Collective::kAllgatherv || c == Collective::kAlltoallv || c == Collective::kGatherv ||
         c == Collective::kScatterv || c == Collective::kReduceScatter;
}

}  // namespace overpass
