// The alpha-beta-gamma cost model: the time of an algorithm on a call, estimated from the number
// of message rounds (alpha each), the bytes each rank moves in sequence (beta each) and the bytes
// it reduces (gamma each). The selector picks the cheapest algorithm that serves a call where no
// tune rule decides. Its parameters come from OVERPASS_COST_MODEL (common/config.cc holds the
// defaults, docs/TUNING.md how they were measured).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/collective.h"
#include "shm/core_distance.h"

namespace overpass {

struct CostModel {
  double alpha;  // seconds per message round
  double beta;   // seconds per byte sent (one link, one direction)
  double gamma;  // seconds per byte reduced
};

// The memory a call's selection is made for (the tune grammar's `mem=` field). `kDevice` on a
// communicator where some rank may pass device buffers (agreed once, when its engine is built),
// `kHost` elsewhere: a fact every rank shares, unlike the memory of one rank's buffers, which only
// the algorithms that touch peers' buffers need and agree on themselves (docs/GPU.md).
enum class CallMemory : std::uint8_t { kHost, kDevice };
constexpr std::string_view callMemoryName(CallMemory m) {
  return m == CallMemory::kDevice ? "device" : "host";
}

// A call as selection sees it. Every field is equal on every rank of the communicator (MPI's
// matching rules), so every rank selects the same algorithm.
struct CallShape {
  Collective coll = Collective::kBarrier;
  std::size_t bytes = 0;  // one rank's contribution: count x type size, or the per-rank block
  std::size_t count = 0;  // elements of a reduction (bytes for the other collectives)
  int teamSize = 1;
  bool ordered = false;       // deterministic mode on an order-sensitive reduction: rank order only
  std::size_t shmBuffer = 0;  // bytes of each rank's shared-memory buffer (0: no channel)
  int nodes = 1;              // nodes the team spans
  int maxPerNode = 0;         // ranks on the node that holds the most (nodes may differ)
  bool acrossNodes = false;   // the inter-node step of a hierarchical algorithm (selectStep)
  bool withinNode = false;    // a node step of a hierarchical algorithm (selectNodeStep)
  CallMemory mem = CallMemory::kHost;
  // How far apart the cores of a two-rank team on one node sit, as its ranks last agreed
  // (shm/core_distance.h); kUnread on every other team.
  CoreDistance cores = CoreDistance::kUnread;
  // The call is the concatenation of independent calls on ranges of its elements (reductions
  // with a predefined operation): the staging pipeline may run it chunk by chunk.
  bool splittable = false;
};

// Helpers for the cost formulas of the registry.
// Exact for every int: doubling an int past 2^30 overflowed (a loop that never ended).
inline double ceilLog2(int p) {
  return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1));
}
inline int floorPow2(int p) {
  return p <= 1 ? 1 : static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
}

}  // namespace overpass
