// A race: the measured choice between the two algorithms a tune rule names (`@shm|pmpi`,
// coll/select/tune.h), made by the communicator's ranks together while the program runs.
//
// On the virtual machines measured (docs/PERFORMANCE.md, "Races"), which of two algorithms is
// faster at some sizes changes while a job runs, with states of the host that no reading of the
// machine tells apart. A race times both on the program's own calls and keeps the faster:
//
//   calls 0 .. 2*kTrials-1  trials: the two algorithms in turn, kRun calls each at a time (a
//                           call right after the other algorithm's finds the caches and pages
//                           as that one left them: a run of calls measures each mostly as it
//                           runs alone), each call timed by each rank
//   call 2*kTrials          the decision: every rank's median time of each algorithm over its
//                           trials, the largest over the ranks (as the slowest rank sees it,
//                           one small allreduce of the MPI library on Overpass's communicator);
//                           the faster wins, a tie the first; then this call runs the winner
//   the next calls          the winner: kFirstEvery after the first race (whose trials are the
//                           shape's first calls, which pay for first-touched pages), kEvery after
//                           each later one; then the race starts again (the host's state
//                           changes over minutes).
//
// Every rank counts the same calls of the shape (blocking calls, which every rank makes in the
// same order, on both of shim/dispatch.cc's paths) and decides from the same agreed times: every
// rank runs the same algorithm at every call. Races run at blocking calls only; nonblocking calls,
// the steps of hierarchical algorithms, the chunks of the staging pipeline and the shapes after a
// full book take the first algorithm.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include "coll/select/cost_model.h"
#include "coll/select/registry.h"

namespace overpass {

class Race {
 public:
  static constexpr std::uint32_t kTrials = 8;       // timed calls of each algorithm per race
  static constexpr std::uint32_t kRun = 4;          // of them, one after another
  static constexpr std::uint32_t kFirstEvery = 64;  // calls of the first winner, then a race
  static constexpr std::uint32_t kEvery = 1024;     // calls of a later winner, then a race

  static_assert(kTrials % kRun == 0);

  enum class Step : std::uint8_t { kTrial, kDecide, kWinner };

  Race(const Algorithm& first, const Algorithm& second) : runners_{&first, &second} {}

  const Algorithm& first() const { return *runners_[0]; }
  const Algorithm& second() const { return *runners_[1]; }
  Step step() const {
    return calls_ < 2 * kTrials ? Step::kTrial
                                : (calls_ == 2 * kTrials ? Step::kDecide : Step::kWinner);
  }
  // The algorithm of the next call: in the trials, the two in turn, kRun calls each; then the
  // winner.
  const Algorithm& runner() const {
    return *runners_[step() == Step::kTrial ? (calls_ / kRun) % 2 : winner_];
  }
  // Whether the next call runs the winner, neither timed nor deciding: shim/dispatch.cc's
  // repeated calls may take it.
  bool settled() const { return step() == Step::kWinner; }

  // This rank's vote: the median time of each algorithm over its trials, in nanoseconds; `vote`
  // (0 or 1) instead gives that one 0 and the other infinity (OVERPASS_RACE_VOTE).
  std::array<double, 2> medians(std::optional<int> vote = std::nullopt) const;
  // The team's verdict from the largest of the ranks' medians of each: the faster wins, a tie
  // the first (also where both are infinite). Every rank passes the same times.
  void decide(const std::array<double, 2>& slowest) { winner_ = slowest[1] < slowest[0] ? 1 : 0; }
  int winner() const { return winner_; }

  // The next call is done: `ns`, this rank's time of it, where it was a trial.
  void done(std::uint64_t ns);

 private:
  std::array<const Algorithm*, 2> runners_;
  std::array<std::array<std::uint64_t, kTrials>, 2> times_{};
  std::uint32_t calls_ = 0;  // since the race began
  int winner_ = 0;
  bool raced_ = false;  // a race was decided before this one
};

// One communicator's races, one per shape a racing rule decides (every rank creates them at the
// same calls: the first call of a shape takes the full path on every rank). At most kMaxRaces;
// the shapes after them take the first algorithm, alike on every rank.
class RaceBook {
 public:
  static constexpr std::size_t kMaxRaces = 256;

  // The race of `call`'s shape between `first` and `second` (begun where there is none, or where
  // the rule names others now); null where the book is full.
  Race* find(const CallShape& call, const Algorithm& first, const Algorithm& second);
  std::size_t size() const { return races_.size(); }

 private:
  using Key = std::tuple<Collective, std::size_t, std::size_t, bool, CallMemory, CoreDistance>;
  std::map<Key, Race> races_;
};

}  // namespace overpass
