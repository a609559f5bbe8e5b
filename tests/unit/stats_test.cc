#include "common/stats.h"

#include <gtest/gtest.h>

#include <array>
#include <nlohmann/json.hpp>

namespace overpass {
namespace {

const std::array<std::string_view, 3> kNames = {"pmpi", "ring", "tree"};

StatsReport reportOf(const Stats& s, int ranks) {
  StatsReport r;
  r.ranks = ranks;
  r.counters = s.counters();
  r.timeSum = s.times();
  r.timeMin = s.times();
  r.timeMax = s.times();
  r.algorithmNames = kNames;
  return r;
}

TEST(Stats, JsonFollowsTheDocumentedContract) {
  Stats s;
  s.record(Collective::kAllreduce, 64, 1, 1000);
  s.record(Collective::kAllreduce, 64, 1, 3000);
  s.record(Collective::kAllreduce, 8, 0, 500);
  s.recordFallback(Collective::kAllreduce, FallbackReason::kNonCommutativeOp);
  s.record(Collective::kReduceScatterBlock, 4, 2, 10);
  s.recordDevice(Collective::kAllreduce);
  const auto j = nlohmann::json::parse(formatStatsJson(reportOf(s, 1)));
  ASSERT_TRUE(j.contains("collectives"));
  const auto& a = j["collectives"]["allreduce"];
  EXPECT_EQ(a["calls"], 3);
  EXPECT_EQ(a["bytes"], 136);
  EXPECT_EQ(a["fallbacks"], 1);
  EXPECT_EQ(a["algorithms"]["ring"], 2);
  EXPECT_EQ(a["algorithms"]["pmpi"], 1);
  EXPECT_EQ(a["fallback_reasons"]["non_commutative_op"], 1);
  EXPECT_EQ(a["device_calls"], 1);
  EXPECT_EQ(j["collectives"]["reduce_scatter_block"]["device_calls"], 0);
  EXPECT_DOUBLE_EQ(a["time_us"]["avg"].get<double>(), 4.5);
  EXPECT_EQ(j["collectives"]["reduce_scatter_block"]["algorithms"]["tree"], 1);
  EXPECT_FALSE(j["collectives"].contains("bcast")) << "collectives never called are left out";
}

TEST(Stats, TableNamesCollectivesAlgorithmsAndReasons) {
  Stats s;
  s.record(Collective::kBcast, 1 << 20, 0, 2000000);
  s.recordFallback(Collective::kBcast, FallbackReason::kDisabled);
  const std::string table = formatStatsTable(reportOf(s, 2));
  EXPECT_NE(table.find("bcast"), std::string::npos);
  EXPECT_NE(table.find("1.0 MiB"), std::string::npos);
  EXPECT_NE(table.find("pmpi=1"), std::string::npos);
  EXPECT_NE(table.find("disabled=1"), std::string::npos);
  EXPECT_NE(table.find("2 rank(s)"), std::string::npos);
}

}  // namespace
}  // namespace overpass
