// Races (coll/select/race.h): the trials alternate between the two algorithms, the decision takes
// the faster of the agreed times (a tie the first), the winner runs until the next race, and the
// book keeps one race per shape, up to its limit.
#include "coll/select/race.h"

#include <gtest/gtest.h>

#include <limits>

namespace overpass {
namespace {

const Algorithm& shmAllgather() {
  return *findAlgorithm(Collective::kAllgather, "shm");
}
const Algorithm& pmpiAllgather() {
  return pmpiAlgorithm(Collective::kAllgather);
}

// Runs the trials of `race`, the first algorithm taking `first` ns and the second `second`.
void runTrials(Race& race, std::uint64_t first, std::uint64_t second) {
  for (std::uint32_t i = 0; i < 2 * Race::kTrials; ++i) {
    ASSERT_EQ(race.step(), Race::Step::kTrial) << i;
    ASSERT_FALSE(race.settled());
    const bool isFirst = &race.runner() == &race.first();
    EXPECT_EQ(isFirst, (i / Race::kRun) % 2 == 0) << i;  // kRun calls each in turn, first first
    race.done(isFirst ? first : second);
  }
  ASSERT_EQ(race.step(), Race::Step::kDecide);
}

// Runs the winner of `race` for its deciding call and `calls` more, the last of which ends it.
void runWinner(Race& race, const Algorithm& winner, std::uint32_t calls) {
  for (std::uint32_t i = 0; i <= calls; ++i) {
    ASSERT_EQ(&race.runner(), &winner) << i;
    race.done(0);
    if (i < calls) {
      ASSERT_TRUE(race.settled()) << i;
    }
  }
  ASSERT_EQ(race.step(), Race::Step::kTrial);
}

// The first winner runs kFirstEvery calls (its trials were the shape's first calls), the later
// ones kEvery.
TEST(Race, TrialsTakeTurnsAndTheFasterWinsUntilTheNextRace) {
  Race race(shmAllgather(), pmpiAllgather());
  runTrials(race, 3000, 1000);
  const std::array<double, 2> m = race.medians();
  EXPECT_DOUBLE_EQ(m[0], 3000);
  EXPECT_DOUBLE_EQ(m[1], 1000);
  race.decide(m);
  EXPECT_EQ(race.winner(), 1);
  runWinner(race, pmpiAllgather(), Race::kFirstEvery);
  // The next race: the first algorithm wins where it is faster now.
  runTrials(race, 900, 1000);
  race.decide(race.medians());
  EXPECT_EQ(race.winner(), 0);
  runWinner(race, shmAllgather(), Race::kEvery);
  runTrials(race, 900, 1000);
  race.decide(race.medians());
  runWinner(race, shmAllgather(), Race::kEvery);
}

// A median, not a mean: the calls that lost their core (a time slice) or touched pages first do
// not decide.
TEST(Race, SlowTrialsDoNotDecide) {
  Race race(shmAllgather(), pmpiAllgather());
  for (std::uint32_t i = 0; i < 2 * Race::kTrials; ++i) {
    const bool first = &race.runner() == &race.first();
    race.done(i % Race::kRun == 0 && first ? 4'000'000 : (first ? 1000 : 2000));
  }
  race.decide(race.medians());
  EXPECT_EQ(race.winner(), 0);
}

// Ties keep the first; a vote as given (OVERPASS_RACE_VOTE) is 0 for its algorithm and infinity
// for the other, and the ranks' largest times decide: two ranks voting differently keep the first.
TEST(Race, TiesAndVotesKeepTheFirst) {
  Race race(shmAllgather(), pmpiAllgather());
  runTrials(race, 1000, 1000);
  race.decide(race.medians());
  EXPECT_EQ(race.winner(), 0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(race.medians(0), (std::array<double, 2>{0, inf}));
  EXPECT_EQ(race.medians(1), (std::array<double, 2>{inf, 0}));
  race.decide({inf, inf});  // max of the two votes, element by element
  EXPECT_EQ(race.winner(), 0);
  race.decide({inf, 0});  // both ranks voted for the second
  EXPECT_EQ(race.winner(), 1);
}

TEST(RaceBook, OneRacePerShapeUpToItsLimit) {
  RaceBook book;
  CallShape a{.coll = Collective::kAllgather, .bytes = 8192, .count = 8192, .teamSize = 2};
  Race* r = book.find(a, shmAllgather(), pmpiAllgather());
  ASSERT_NE(r, nullptr);
  for (std::uint32_t i = 0; i < Race::kRun; ++i) r->done(5);
  EXPECT_EQ(book.find(a, shmAllgather(), pmpiAllgather()), r);
  EXPECT_EQ(&r->runner(), &pmpiAllgather());  // its second run of trials: the count goes on
  CallShape b = a;
  b.cores = CoreDistance::kFar;  // another reading of the cores: another race
  EXPECT_NE(book.find(b, shmAllgather(), pmpiAllgather()), r);
  // The rule names others now: the race begins again with them.
  const Algorithm& ring = *findAlgorithm(Collective::kAllgather, "ring");
  Race* again = book.find(a, ring, pmpiAllgather());
  ASSERT_EQ(again, r);
  EXPECT_EQ(&again->first(), &ring);
  EXPECT_EQ(&again->runner(), &ring);  // its first trial
  for (std::size_t bytes = 1; book.size() < RaceBook::kMaxRaces; ++bytes) {
    CallShape c = a;
    c.bytes = c.count = bytes;
    ASSERT_NE(book.find(c, shmAllgather(), pmpiAllgather()), nullptr);
  }
  CallShape full = a;
  full.bytes = full.count = 1 << 30;
  EXPECT_EQ(book.find(full, shmAllgather(), pmpiAllgather()), nullptr);
  EXPECT_EQ(book.find(a, ring, pmpiAllgather()), r);  // the races it holds go on
}

}  // namespace
}  // namespace overpass
