// The selector: a pure function of the call's shape (coll/select/cost_model.h) that picks one
// algorithm of the registry. Every rank of a communicator passes equal shapes and holds an equal
// selector (its configuration is agreed at initialisation), so every rank picks the same algorithm.
//
// Order: the rules, highest priority first (OVERPASS_<COLLECTIVE>, then OVERPASS_TUNE from its
// last rule to its first, then generatedTune, then the built-in rules kDefaultTune): the first
// rule that matches the call and whose algorithm can serve it decides. Where none does, the cost
// model picks the cheapest Overpass algorithm that can serve the call. A rule may name two
// algorithms, a race (coll/select/race.h): the selector returns both, and the shim runs the one the
// ranks agree on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coll/coll_args.h"
#include "coll/select/registry.h"
#include "coll/select/tune.h"
#include "common/config.h"

namespace overpass {

// The built-in rules, in the grammar users write (docs/TUNING.md explains each).
extern const std::string_view kDefaultTune;

// The generated rules, in the same grammar, above the built-in ones: device buffers through the
// staging pipeline (from OVERPASS_GPU_CHUNK) and IPC (OVERPASS_GPU_IPC), and the calls on a
// communicator of one rank to the MPI library (all but reduce_scatter_block).
std::string generatedTune(const Config& config);

struct Selection {
  const Algorithm* algorithm = nullptr;
  // The second algorithm of a race the deciding rule names, where it serves the call too
  // (coll/select/race.h); null: no race, `algorithm` runs.
  const Algorithm* rival = nullptr;
  const TuneRule* rule = nullptr;     // the rule that decided; nullptr: the cost model
  const TuneRule* skipped = nullptr;  // a higher-priority rule that matched but cannot serve
};

class Selector {
 public:
  Selector() = default;
  // Built from the configuration; nullopt with one message per bad variable in *errors.
  static std::optional<Selector> create(const Config& config, std::vector<std::string>* errors);

  // `excluded`: algorithms that declined this call's shape (a device algorithm, alike on every
  // rank), passed over as if they could not serve it.
  Selection select(const CallShape& call, std::span<const Algorithm* const> excluded = {}) const;
  std::span<const TuneRule> rules() const { return rules_; }  // lowest priority first
  const CostModel& costModel() const { return model_; }

 private:
  std::vector<TuneRule> rules_;
  CostModel model_{};
};

// The algorithm for one step of a hierarchical algorithm, run on a sub-group of `teamSize` ranks
// one per node (the ranks with the same local rank): the selector's choice for that call, as if
// it were a call of its own on that many ranks (rules keyed by size and np apply), when it is an
// Overpass algorithm; `fallback` without a selector or when the choice is the MPI library (which
// cannot run on a sub-group). Every rank of the sub-group passes the same shape: the same choice.
const Algorithm& selectStep(const Selector* selector, const CollArgs& args, int teamSize,
                            const Algorithm& fallback);

// The algorithm for a node step of a hierarchical algorithm, run among the `nodeSize` ranks of
// one node (the bcast, gather or scatter within the node): the selector's choice for a call of
// that size on one node of that many ranks, whose shared-memory channel has `shmBuffer` bytes
// per rank (0: none), so that the shm algorithms serve where the node has a channel; the
// built-in level=node rules give the shared memory, else the flat default. `fallback` without a
// selector or when the choice is the MPI library. Every rank of the node passes the same shape.
const Algorithm& selectNodeStep(const Selector* selector, const CollArgs& args, int nodeSize,
                                std::size_t shmBuffer, const Algorithm& fallback);
// The same for the node step of `team`'s hierarchical algorithm (team.selector, the node's
// channel team.nodeShm): the fallback is the node's shared memory where the node has a channel,
// today's default, else `flat`.
const Algorithm& selectNodeStep(const Team& team, const CollArgs& args, int nodeSize,
                                const Algorithm& flat);

// Memoised selections of one communicator: a few recent shapes per collective, looked up before
// the selector runs (the selector depends only on the shape and on state fixed at init). An
// algorithm that declined a shape (a device algorithm whose first round found that some rank's
// buffers cannot take part, alike on every rank) is passed over for that shape, and offered again
// after kRetryAfter calls of it: every rank sees the same calls and declines, so every rank's
// memo holds the same. `select` is the selector's select(call, excluded) or a stand-in. Not
// thread-safe; MPI forbids concurrent collectives on one communicator.
class SelectionCache {
 public:
  static constexpr std::uint32_t kRetryAfter = 64;

  // The algorithm and, in a race, its rival (Selection's two; its rules are not kept).
  // `afterDeclines`: chosen with algorithms that declined the shape passed over, until a retry
  // (kRetryAfter calls of it through get(), which every rank must make alike).
  struct Choice {
    const Algorithm* algorithm = nullptr;
    const Algorithm* rival = nullptr;
    bool afterDeclines = false;
  };

  template <class Select>
  Choice get(const CallShape& call, Select&& select) {
    Entry& e = entry(call);
    if (e.chosen.algorithm == nullptr || e.bytes != call.bytes || e.count != call.count ||
        e.ordered != call.ordered || e.mem != call.mem || e.cores != call.cores) {
      e = {call.bytes, call.count, call.ordered, call.mem, call.cores};
      e.chosen = choice(select(call, std::span<const Algorithm* const>{}));
    } else if (e.declines && ++e.uses >= kRetryAfter) {
      e.declines = 0;
      e.uses = 0;
      e.chosen = choice(select(call, std::span<const Algorithm* const>{}));
    }
    return chosen(e);
  }
  // `declined` (the entry's algorithm) declined `call`: the next choice, memoised.
  template <class Select>
  Choice decline(const CallShape& call, const Algorithm& declined, Select&& select) {
    Entry& e = entry(call);
    if (e.declines < kMaxDeclines) e.declined[e.declines++] = &declined;
    e.uses = 0;
    e.chosen =
        choice(select(call, std::span<const Algorithm* const>(e.declined.data(), e.declines)));
    return chosen(e);
  }

 private:
  static constexpr std::size_t kWays = 16;
  static constexpr std::size_t kMaxDeclines = 2;  // device_ipc, then staged_pipeline
  struct Entry {
    std::size_t bytes = 0, count = 0;
    bool ordered = false;
    CallMemory mem = CallMemory::kHost;
    CoreDistance cores = CoreDistance::kUnread;
    Choice chosen{};
    std::array<const Algorithm*, kMaxDeclines> declined{};
    std::uint32_t declines = 0, uses = 0;
  };
  static Choice choice(const Selection& s) { return {s.algorithm, s.rival}; }
  static Choice chosen(const Entry& e) {
    return {e.chosen.algorithm, e.chosen.rival, e.declines > 0};
  }
  Entry& entry(const CallShape& call) {
    return entries_[index(call.coll)][(call.bytes ^ (call.bytes >> 9)) % kWays];
  }
  std::array<std::array<Entry, kWays>, kNumCollectives> entries_{};
};

}  // namespace overpass
