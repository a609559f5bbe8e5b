#include "coll/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "coll/selector.h"
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

TEST(Selector, PicksAnAlgorithmOfTheRightCollectiveAtEverySize) {
  const Config config;
  for (std::size_t c = 0; c < kNumCollectives; ++c)
    for (std::size_t bytes : {0ul, 1ul, 8ul, 65536ul, 1ul << 26})
      for (int p : {1, 2, 3, 16}) {
        const auto coll = static_cast<Collective>(c);
        const Algorithm& a = selectAlgorithm({coll, bytes, p}, config);
        EXPECT_EQ(a.coll, coll);
        EXPECT_FALSE(a.isPmpi()) << "the default serves every call with Overpass";
      }
}

TEST(Selector, LargeAllreducesGoAroundTheRingFromThreeRanks) {
  const Config config;
  auto pick = [&](std::size_t bytes, int p) {
    return std::string(selectAlgorithm({Collective::kAllreduce, bytes, p}, config).name);
  };
  EXPECT_EQ(pick(8, 4), "recursive_doubling");
  EXPECT_EQ(pick((256u << 10) - 1, 4), "recursive_doubling");
  EXPECT_EQ(pick(256u << 10, 4), "ring");
  EXPECT_EQ(pick(64u << 20, 3), "ring");
  EXPECT_EQ(pick(64u << 20, 2), "recursive_doubling");
  EXPECT_EQ(std::string(selectAlgorithm({Collective::kReduce, 1u << 20, 4}, config).name),
            "binomial");
}

}  // namespace
}  // namespace overpass
