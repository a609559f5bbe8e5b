// Per-process statistics of the intercepted collectives (OVERPASS_STATS): lock-free counters
// updated on the call path, flattened into a vector for a cross-rank reduction at finalize, and
// formatted as a table or as the JSON contract documented in docs/STATS.md.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/collective.h"
#include "common/fallback.h"

namespace overpass {

inline constexpr std::size_t kMaxAlgorithms = 96;  // ids of the algorithm registry

// A row of the statistics: a collective, blocking or nonblocking (named "i" + its name).
struct StatsRow {
  StatsRow(Collective c, bool nonblocking = false)  // NOLINT: a collective is its blocking row
      : index(overpass::index(c) + (nonblocking ? kNumCollectives : 0)) {}
  std::size_t index;
};
inline constexpr std::size_t kNumStatsRows = 2 * kNumCollectives;
std::string statsRowName(std::size_t row);

class Stats {
 public:
  // One call moving `bytes`, served by algorithm `algorithm` (a registry id; a fallback passes
  // the id of the collective's "pmpi" entry and its reason); a nonblocking one from its start to
  // its completion.
  void record(StatsRow row, std::uint64_t bytes, std::size_t algorithm, std::uint64_t ns);
  void recordFallback(StatsRow row, FallbackReason reason);
  // One call in which this rank's buffers included device memory (docs/GPU.md).
  void recordDevice(StatsRow row);
  // One nonblocking call served as part of a fused group (OVERPASS_FUSION).
  void recordFused(StatsRow row);

  // Counters in a fixed order, to be summed over ranks; and per-collective times in ns.
  std::vector<std::uint64_t> counters() const;
  std::vector<double> times() const;

 private:
  struct PerCollective {
    std::atomic<std::uint64_t> calls{0}, bytes{0}, ns{0}, device{0}, fused{0};
    std::array<std::atomic<std::uint64_t>, kMaxAlgorithms> algorithms{};
    std::array<std::atomic<std::uint64_t>, kNumFallbackReasons> fallbacks{};
  };
  std::array<PerCollective, kNumStatsRows> colls_;
};

// Totals over the ranks of the job, as reduced by the shim.
struct StatsReport {
  int ranks = 1;
  std::vector<std::uint64_t> counters;               // summed: Stats::counters() layout
  std::vector<double> timeSum, timeMin, timeMax;     // per row, ns
  std::span<const std::string_view> algorithmNames;  // registry id -> name
};

std::string formatStatsTable(const StatsReport& report);
std::string formatStatsJson(const StatsReport& report);

}  // namespace overpass
