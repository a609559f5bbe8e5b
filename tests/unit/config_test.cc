#include "common/config.h"

#include <gtest/gtest.h>

namespace overpass {
namespace {

ParsedConfig parse(Environment env) {
  return parseConfig(env);
}

TEST(Config, DefaultsWhenUnset) {
  const ParsedConfig p = parse({});
  EXPECT_TRUE(p.errors.empty());
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_FALSE(p.config.disable);
  EXPECT_TRUE(p.config.colls.all());
  EXPECT_EQ(p.config.logLevel, LogLevel::kWarn);
  EXPECT_EQ(p.config.logFile, "");
  EXPECT_EQ(p.config.statsMode, StatsMode::kOff);
  ASSERT_EQ(p.values.size(), configVars().size());
  for (std::size_t i = 0; i < configVars().size(); ++i)
    EXPECT_EQ(p.values[i], configVars()[i].defaultValue);
}

TEST(Config, EveryDefaultParses) {
  for (const ConfigVar& v : configVars()) {
    Config c;
    EXPECT_TRUE(v.parse(v.defaultValue, c)) << v.name;
    EXPECT_FALSE(v.help.empty()) << v.name;
    EXPECT_FALSE(v.accepted.empty()) << v.name;
  }
}

TEST(Config, Disable) {
  for (const char* yes : {"1", "yes", "TRUE", "on", " 1 "})
    EXPECT_TRUE(parse({{"OVERPASS_DISABLE", yes}}).config.disable) << yes;
  for (const char* no : {"0", "no", "false", "off"})
    EXPECT_FALSE(parse({{"OVERPASS_DISABLE", no}}).config.disable) << no;
  const ParsedConfig bad = parse({{"OVERPASS_DISABLE", "maybe"}});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("OVERPASS_DISABLE"), std::string::npos);
  EXPECT_NE(bad.errors[0].find("'maybe'"), std::string::npos);
  EXPECT_NE(bad.errors[0].find("accepted"), std::string::npos);
}

TEST(Config, CollsListAndExclusion) {
  const Config only = parse({{"OVERPASS_COLLS", "allreduce,bcast"}}).config;
  EXPECT_TRUE(only.handles(Collective::kAllreduce));
  EXPECT_TRUE(only.handles(Collective::kBcast));
  EXPECT_FALSE(only.handles(Collective::kAlltoall));
  EXPECT_EQ(only.colls.count(), 2u);

  const Config except = parse({{"OVERPASS_COLLS", "^alltoall,bcast"}}).config;
  EXPECT_FALSE(except.handles(Collective::kAlltoall));
  EXPECT_FALSE(except.handles(Collective::kBcast));
  EXPECT_TRUE(except.handles(Collective::kAllreduce));
  EXPECT_EQ(except.colls.count(), kNumCollectives - 2);

  EXPECT_EQ(parse({{"OVERPASS_COLLS", "none"}}).config.colls.count(), 0u);
  EXPECT_EQ(parse({{"OVERPASS_COLLS", "all"}}).config.colls.count(), kNumCollectives);
  EXPECT_EQ(parse({{"OVERPASS_COLLS", "^all"}}).config.colls.count(), 0u);
  EXPECT_EQ(parse({{"OVERPASS_COLLS", " Reduce_Scatter_Block "}}).config.colls.count(), 1u);

  for (const char* bad : {"allreduce,bogus", "^none", "allreduc"}) {
    const ParsedConfig p = parse({{"OVERPASS_COLLS", bad}});
    ASSERT_EQ(p.errors.size(), 1u) << bad;
    EXPECT_NE(p.errors[0].find("OVERPASS_COLLS"), std::string::npos);
    EXPECT_TRUE(p.config.colls.all()) << "a malformed value leaves the default";
  }
}

TEST(Config, LogLevels) {
  EXPECT_EQ(parse({{"OVERPASS_LOG", "error"}}).config.logLevel, LogLevel::kError);
  EXPECT_EQ(parse({{"OVERPASS_LOG", "info"}}).config.logLevel, LogLevel::kInfo);
  EXPECT_EQ(parse({{"OVERPASS_LOG", "DEBUG"}}).config.logLevel, LogLevel::kDebug);
  EXPECT_EQ(parse({{"OVERPASS_LOG", "trace"}}).config.logLevel, LogLevel::kTrace);
  const ParsedConfig loud = parse({{"OVERPASS_LOG", "loud"}});
  ASSERT_EQ(loud.errors.size(), 1u);
  EXPECT_EQ(loud.errors[0],
            "invalid value 'loud' for OVERPASS_LOG; accepted: error|warn|info|debug|trace");
}

TEST(Config, LogFileAndStats) {
  EXPECT_EQ(parse({{"OVERPASS_LOG_FILE", "/tmp/x.%r.log"}}).config.logFile, "/tmp/x.%r.log");
  EXPECT_EQ(parse({{"OVERPASS_STATS", "1"}}).config.statsMode, StatsMode::kTable);
  EXPECT_EQ(parse({{"OVERPASS_STATS", "0"}}).config.statsMode, StatsMode::kOff);
  EXPECT_EQ(parse({{"OVERPASS_STATS", ""}}).config.statsMode, StatsMode::kOff);
  const Config json = parse({{"OVERPASS_STATS", "out/stats.json"}}).config;
  EXPECT_EQ(json.statsMode, StatsMode::kJson);
  EXPECT_EQ(json.statsPath, "out/stats.json");
}

TEST(Config, TopologyVariables) {
  const Config c = parse({{"OVERPASS_TOPO_DUMP", " t.json "},
                          {"OVERPASS_TOPO_FILE", "in.json"},
                          {"OVERPASS_TOPO_RANKS_PER_NODE", "4"}})
                       .config;
  EXPECT_EQ(c.topoDump, "t.json");
  EXPECT_EQ(c.topoFile, "in.json");
  EXPECT_EQ(c.topoRanksPerNode, 4);
  for (const char* bad : {"-1", "two", "", "1.5", "9999999"}) {
    const ParsedConfig p = parse({{"OVERPASS_TOPO_RANKS_PER_NODE", bad}});
    ASSERT_EQ(p.errors.size(), 1u) << bad;
    EXPECT_NE(p.errors[0].find("OVERPASS_TOPO_RANKS_PER_NODE"), std::string::npos);
  }
}

TEST(Config, TransportVariables) {
  EXPECT_EQ(parse({}).config.transport, TransportKind::kPmpi);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "UCX"}}).config.transport, TransportKind::kUcx);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "pmpi"}}).config.transport, TransportKind::kPmpi);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "nccl"}}).errors.size(), 1u);
  EXPECT_DOUBLE_EQ(parse({{"OVERPASS_TIMEOUT", "2.5"}}).config.timeoutSeconds, 2.5);
  EXPECT_DOUBLE_EQ(parse({{"OVERPASS_TIMEOUT", "0"}}).config.timeoutSeconds, 0);
  for (const char* bad : {"-1", "soon", "", "3s", "nan"})
    EXPECT_EQ(parse({{"OVERPASS_TIMEOUT", bad}}).errors.size(), 1u) << bad;
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "8K"}}).config.ucxRndvThresh, "8k");
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "65536"}}).config.ucxRndvThresh, "65536");
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "auto"}}).config.ucxRndvThresh, "auto");
  for (const char* bad : {"8KB", "K", "big", "-4"})
    EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", bad}}).errors.size(), 1u) << bad;
}

TEST(Config, UnknownNameSuggestsNearest) {
  const ParsedConfig p = parse({{"OVERPASS_STAT", "1"}, {"OVERPASS_LOGG", "info"}});
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_EQ(p.warnings[0], "unknown variable OVERPASS_STAT (did you mean OVERPASS_STATS?)");
  EXPECT_EQ(p.warnings[1], "unknown variable OVERPASS_LOGG (did you mean OVERPASS_LOG?)");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.config.statsMode, StatsMode::kOff);
}

TEST(Config, AgreementHashesCoverOnlyAgreedVariables) {
  const auto base = agreementHashes(parse({}));
  const auto vars = configVars();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const std::string other = vars[i].name == "OVERPASS_LOG"     ? "debug"
                              : vars[i].name == "OVERPASS_COLLS" ? "bcast"
                              : vars[i].defaultValue == "1"      ? "0"
                                                                 : "1";
    const auto changed = agreementHashes(parse({{std::string(vars[i].name), other}}));
    EXPECT_EQ(base[i] != changed[i], vars[i].agreed) << vars[i].name;
    for (std::size_t j = 0; j < vars.size(); ++j)
      if (j != i) {
        EXPECT_EQ(base[j], changed[j]);
      }
  }
}

TEST(Config, EditDistance) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", "abc"), 0u);
  EXPECT_EQ(editDistance("abc", "abd"), 1u);
  EXPECT_EQ(editDistance("OVERPASS_STAT", "OVERPASS_STATS"), 1u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace overpass

namespace overpass {
namespace {

TEST(Config, DeviceVariables) {
  const Config defaults = parse({}).config;
  EXPECT_EQ(defaults.gpuChunk, std::size_t{1} << 20);
  EXPECT_EQ(defaults.gpuDepth, 3);
  EXPECT_FALSE(defaults.simulatedDevice);
  EXPECT_TRUE(defaults.gpuIpc);
  const Config c = parse({{"OVERPASS_GPU_CHUNK", "64k"},
                          {"OVERPASS_GPU_DEPTH", " 2 "},
                          {"OVERPASS_SIM_DEVICE", "yes"},
                          {"OVERPASS_GPU_IPC", "0"}})
                       .config;
  EXPECT_EQ(c.gpuChunk, std::size_t{64} << 10);
  EXPECT_EQ(c.gpuDepth, 2);
  EXPECT_TRUE(c.simulatedDevice);
  EXPECT_FALSE(c.gpuIpc);
  EXPECT_EQ(parse({{"OVERPASS_GPU_CHUNK", "0"}}).config.gpuChunk, 0u);
  for (const char* bad : {"1K", "128M", "x", "-1"}) {
    const ParsedConfig p = parse({{"OVERPASS_GPU_CHUNK", bad}});
    ASSERT_EQ(p.errors.size(), 1u) << bad;
    EXPECT_NE(p.errors[0].find("OVERPASS_GPU_CHUNK"), std::string::npos);
  }
  for (const char* bad : {"1", "9", "3x", ""}) {
    EXPECT_EQ(parse({{"OVERPASS_GPU_DEPTH", bad}}).errors.size(), 1u) << bad;
  }
  EXPECT_EQ(parse({{"OVERPASS_SIM_DEVICE", "perhaps"}}).errors.size(), 1u);
  EXPECT_EQ(parse({{"OVERPASS_GPU_IPC", "perhaps"}}).errors.size(), 1u);
}

TEST(Config, CommWarmUp) {
  EXPECT_EQ(parse({}).config.commWarmUp, 3u);
  EXPECT_EQ(parse({{"OVERPASS_COMM_WARMUP", "0"}}).config.commWarmUp, 0u);
  EXPECT_EQ(parse({{"OVERPASS_COMM_WARMUP", " 12 "}}).config.commWarmUp, 12u);
  for (const char* bad : {"", "-1", "1.5", "3x", "1000000", "0x10"}) {
    const ParsedConfig p = parse({{"OVERPASS_COMM_WARMUP", bad}});
    ASSERT_EQ(p.errors.size(), 1u) << bad;
    EXPECT_NE(p.errors[0].find("OVERPASS_COMM_WARMUP"), std::string::npos);
  }
}

}  // namespace
}  // namespace overpass
