#include "coll/select/registry.h"

#include <gtest/gtest.h>

#include <climits>
#include <set>
#include <string>

#include "coll/select/cost_model.h"
#include "common/stats.h"

namespace overpass {
namespace {

TEST(Registry, EveryCollectiveHasPmpiAndAnOverpassAlgorithm) {
  for (std::size_t c = 0; c < kNumCollectives; ++c) {
    const auto coll = static_cast<Collective>(c);
    EXPECT_TRUE(pmpiAlgorithm(coll).isPmpi());
    EXPECT_EQ(pmpiAlgorithm(coll).coll, coll);
    int own = 0;
    for (const Algorithm& a : algorithms()) own += a.coll == coll && !a.isPmpi();
    EXPECT_GE(own, 1) << collectiveName(coll);
  }
}

TEST(Registry, NamesAreUniquePerCollectiveAndIdsIndexTheTable) {
  std::set<std::pair<int, std::string>> seen;
  EXPECT_LE(algorithms().size(), kMaxAlgorithms);
  ASSERT_EQ(algorithmNames().size(), algorithms().size());
  for (const Algorithm& a : algorithms()) {
    EXPECT_TRUE(seen.insert({static_cast<int>(a.coll), std::string(a.name)}).second) << a.name;
    EXPECT_EQ(&algorithms()[algorithmId(a)], &a);
    EXPECT_EQ(algorithmNames()[algorithmId(a)], a.name);
    EXPECT_FALSE(a.description.empty());
    EXPECT_EQ(findAlgorithm(a.coll, a.name), &a);
  }
  EXPECT_EQ(findAlgorithm(Collective::kAllreduce, "no_such_algorithm"), nullptr);
}

// The cost formulas' helpers, exact up to the largest int (issue 14: doubling past 2^30
// overflowed, and `overpass-info --selection` on a team that large never ended).
TEST(Registry, CostHelpersAreExactForEveryTeamSize) {
  EXPECT_EQ(ceilLog2(1), 0);
  EXPECT_EQ(ceilLog2(2), 1);
  EXPECT_EQ(ceilLog2(3), 2);
  EXPECT_EQ(ceilLog2(4), 2);
  EXPECT_EQ(ceilLog2(5), 3);
  EXPECT_EQ(ceilLog2(1 << 30), 30);
  EXPECT_EQ(ceilLog2((1 << 30) + 1), 31);
  EXPECT_EQ(ceilLog2(INT_MAX), 31);
  EXPECT_EQ(floorPow2(1), 1);
  EXPECT_EQ(floorPow2(3), 2);
  EXPECT_EQ(floorPow2(4), 4);
  EXPECT_EQ(floorPow2(65537), 65536);
  EXPECT_EQ(floorPow2(INT_MAX), 1 << 30);
  // Every algorithm's cost and precondition on a team past 2^30, in finite time.
  for (const Algorithm& a : algorithms()) {
    CallShape shape;
    shape.coll = a.coll;
    shape.bytes = shape.count = 1 << 20;
    shape.teamSize = (1 << 30) + 1;
    if (a.cost) {
      EXPECT_GE(a.cost(shape, CostModel{1e-6, 1e-9, 1e-9}), 0) << a.name;
    }
    (void)a.canServe(shape);
  }
}

// Deterministic mode relies on it: every reduction has a rank-order algorithm for every call.
TEST(Registry, EveryReductionHasARankOrderAlgorithmServingEveryCall) {
  for (Collective coll :
       {Collective::kAllreduce, Collective::kReduce, Collective::kReduceScatterBlock,
        Collective::kReduceScatter, Collective::kScan, Collective::kExscan}) {
    for (std::size_t count : {0ul, 1ul, 3ul, 1000ul, 1ul << 24})
      for (int p : {1, 2, 3, 7, 16}) {
        CallShape call{coll, count * 8, count, p, true};
        bool served = false;
        for (const Algorithm& a : algorithms()) served |= a.coll == coll && a.canServe(call);
        EXPECT_TRUE(served) << collectiveName(coll) << " count " << count << " p " << p;
      }
  }
}

}  // namespace
}  // namespace overpass
