// The collectives Overpass knows, by kind. This is the one list of collective kinds; the shim's
// interception list (shim/intercepted.def) names the MPI entry points for each of them.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace overpass {

#define OVERPASS_COLLECTIVES(X)                  \
  X(kAllreduce, "allreduce")                     \
  X(kBcast, "bcast")                             \
  X(kScatter, "scatter")                         \
  X(kGather, "gather")                           \
  X(kAlltoall, "alltoall")                       \
  X(kReduce, "reduce")                           \
  X(kAllgather, "allgather")                     \
  X(kReduceScatterBlock, "reduce_scatter_block") \
  X(kBarrier, "barrier")

enum class Collective : int {
#define OVERPASS_X(id, name) id,
  OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
};

inline constexpr std::size_t kNumCollectives = 0
#define OVERPASS_X(id, name) +1
    OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
    ;

inline constexpr std::array<std::string_view, kNumCollectives> kCollectiveNames = {
#define OVERPASS_X(id, name) name,
    OVERPASS_COLLECTIVES(OVERPASS_X)
#undef OVERPASS_X
};

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
         c == Collective::kReduceScatterBlock;
}

}  // namespace overpass
