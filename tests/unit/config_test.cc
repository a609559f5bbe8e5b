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
  EXPECT_EQ(bad.errors[0].rfind("OVERPASS_DISABLE: ", 0), 0u) << bad.errors[0];
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
  EXPECT_EQ(parse({{"OVERPASS_COLLS", " Reduce_Scatter_Block "}}).config.colls.count(), 1u);
  EXPECT_EQ(parse({{"OVERPASS_COLLS", " NONE "}}).config.colls.count(), 0u);

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
            "OVERPASS_LOG: invalid value 'loud'; accepted: error|warn|info|debug|trace");
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
  for (const char* bad : {"-1", "two", " ", "1.5", "9999999", "+4", "4 4", "0x10"}) {
    const ParsedConfig p = parse({{"OVERPASS_TOPO_RANKS_PER_NODE", bad}});
    ASSERT_EQ(p.errors.size(), 1u) << bad;
    EXPECT_NE(p.errors[0].find("OVERPASS_TOPO_RANKS_PER_NODE"), std::string::npos);
  }
}

TEST(Config, TransportVariables) {
  EXPECT_EQ(parse({}).config.transport, TransportKind::kAuto);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "auto"}}).config.transport, TransportKind::kAuto);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "UCX"}}).config.transport, TransportKind::kUcx);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "pmpi"}}).config.transport, TransportKind::kPmpi);
  EXPECT_EQ(parse({{"OVERPASS_TRANSPORT", "nccl"}}).errors.size(), 1u);
  EXPECT_DOUBLE_EQ(parse({{"OVERPASS_TIMEOUT", "2.5"}}).config.timeoutSeconds, 2.5);
  EXPECT_DOUBLE_EQ(parse({{"OVERPASS_TIMEOUT", "0"}}).config.timeoutSeconds, 0);
  for (const char* bad : {"-1", "soon", " ", "3x", "nan"})
    EXPECT_EQ(parse({{"OVERPASS_TIMEOUT", bad}}).errors.size(), 1u) << bad;
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "8K"}}).config.ucxRndvThresh, "8192");
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

// A valid value other than the default for every variable.
std::string otherValue(const ConfigVar& var) {
  const std::string_view name = var.name;
  if (name == "OVERPASS_LOG") return "debug";
  if (name == "OVERPASS_COLLS") return "bcast";
  if (name == "OVERPASS_TRANSPORT") return "ucx";
  if (name == "OVERPASS_SHM_BUFFER" || name == "OVERPASS_GPU_CHUNK" || name == "OVERPASS_FUSION")
    return "8K";
  if (name == "OVERPASS_PROGRESS") return "thread";
  if (name == "OVERPASS_COST_MODEL") return "latency=1us";
  if (name == "OVERPASS_STATS" || name.find("_FILE") != std::string_view::npos ||
      name.find("_DUMP") != std::string_view::npos)
    return "x.json";
  if (name == "OVERPASS_GPU_DEPTH") return "4";
  if (name == "OVERPASS_CORE_DISTANCE") return "far";
  if (name == "OVERPASS_RACE_VOTE") return "second";
  return var.defaultValue == "1" ? "0" : "1";
}

TEST(Config, AgreementHashesCoverOnlyAgreedVariables) {
  const auto base = agreementHashes(parse({}));
  const auto vars = configVars();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const ParsedConfig p = parse({{std::string(vars[i].name), otherValue(vars[i])}});
    ASSERT_TRUE(p.errors.empty()) << p.errors[0];
    const auto changed = agreementHashes(p);
    EXPECT_EQ(base[i] != changed[i], vars[i].agreed) << vars[i].name;
    for (std::size_t j = 0; j < vars.size(); ++j)
      if (j != i) {
        EXPECT_EQ(base[j], changed[j]);
      }
  }
}

// OVERPASS_CORE_DISTANCE: measured (auto), or this rank's verdict as given.
TEST(Config, CoreDistance) {
  EXPECT_FALSE(parse({}).config.coresFar);
  EXPECT_FALSE(parse({{"OVERPASS_CORE_DISTANCE", "auto"}}).config.coresFar);
  EXPECT_EQ(parse({{"OVERPASS_CORE_DISTANCE", "near"}}).config.coresFar, false);
  EXPECT_EQ(parse({{"OVERPASS_CORE_DISTANCE", "FAR"}}).config.coresFar, true);
  const ParsedConfig bad = parse({{"OVERPASS_CORE_DISTANCE", "close"}});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("auto|near|far"), std::string::npos) << bad.errors[0];
}

// OVERPASS_RACE_VOTE: this rank's timings (auto), or its vote for a race's first or second.
TEST(Config, RaceVote) {
  EXPECT_FALSE(parse({}).config.raceVote);
  EXPECT_FALSE(parse({{"OVERPASS_RACE_VOTE", "auto"}}).config.raceVote);
  EXPECT_EQ(parse({{"OVERPASS_RACE_VOTE", "first"}}).config.raceVote, 0);
  EXPECT_EQ(parse({{"OVERPASS_RACE_VOTE", "Second"}}).config.raceVote, 1);
  EXPECT_EQ(parse({{"OVERPASS_RACE_VOTE", "third"}}).errors.size(), 1u);
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
  for (const char* bad : {"1", "9", "3x", " ", "03x", "-3"}) {
    EXPECT_EQ(parse({{"OVERPASS_GPU_DEPTH", bad}}).errors.size(), 1u) << bad;
  }
  EXPECT_EQ(parse({{"OVERPASS_SIM_DEVICE", "perhaps"}}).errors.size(), 1u);
  EXPECT_EQ(parse({{"OVERPASS_GPU_IPC", "perhaps"}}).errors.size(), 1u);
}

TEST(Config, CommWarmUp) {
  EXPECT_EQ(parse({}).config.commWarmUp, 3u);
  EXPECT_EQ(parse({{"OVERPASS_COMM_WARMUP", "0"}}).config.commWarmUp, 0u);
  EXPECT_EQ(parse({{"OVERPASS_COMM_WARMUP", " 12 "}}).config.commWarmUp, 12u);
  for (const char* bad : {" ", "-1", "1.5", "3x", "1000000", "0x10"}) {
    const ParsedConfig p = parse({{"OVERPASS_COMM_WARMUP", bad}});
    ASSERT_EQ(p.errors.size(), 1u) << bad;
    EXPECT_NE(p.errors[0].find("OVERPASS_COMM_WARMUP"), std::string::npos);
  }
}

}  // namespace
}  // namespace overpass

// Strict configuration (issue 14): one parser per kind of value, canonical values compared,
// messages that name the variable first, checked file access.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "common/files.h"

namespace overpass {
namespace {

std::string errorOf(const std::string& name, const std::string& value) {
  const ParsedConfig p = parse({{name, value}});
  return p.errors.size() == 1 ? p.errors[0] : "(" + std::to_string(p.errors.size()) + " errors)";
}

TEST(StrictConfig, EmptyMeansTheDefaultAndBlanksAreAnError) {
  const ParsedConfig defaults = parse({});
  for (const ConfigVar& v : configVars()) {
    const std::string name(v.name);
    const ParsedConfig empty = parse({{name, ""}});
    EXPECT_TRUE(empty.errors.empty()) << name;
    EXPECT_EQ(agreementHashes(empty), agreementHashes(defaults)) << name;
    const std::string blank = errorOf(name, "  \t ");
    EXPECT_EQ(blank.rfind(name + ": invalid value '  \\x09 ' (only blanks", 0), 0u) << blank;
  }
  EXPECT_TRUE(parse({{"OVERPASS_COLLS", ""}}).config.colls.all()) << "empty is not 'none'";
  EXPECT_EQ(parse({{"OVERPASS_COLLS", " "}}).errors.size(), 1u);
}

TEST(StrictConfig, CollsListsAreStrict) {
  for (const char* bad : {"none,allreduce", "allreduce,none", "all,bcast", "allreduce,", ",bcast",
                          "allreduce,,bcast", "^", "^ ", "^all", "^none", "^allreduce,",
                          "bcast,bcast", "^bcast,bcast", "allreduce bcast", "^^bcast", ","}) {
    const std::string e = errorOf("OVERPASS_COLLS", bad);
    EXPECT_EQ(e.rfind("OVERPASS_COLLS: invalid value '", 0), 0u) << bad << ": " << e;
  }
  EXPECT_EQ(parse({{"OVERPASS_COLLS", " allreduce , bcast "}}).config.colls.count(), 2u);
  EXPECT_EQ(parse({{"OVERPASS_COLLS", "^ bcast"}}).config.colls.count(), kNumCollectives - 1);
}

TEST(StrictConfig, StatsIsABooleanOrAPath) {
  for (const char* bad : {"2", "-1", "tru", "ye", "stats", "1.5", "-0", "+1", "10"}) {
    const std::string e = errorOf("OVERPASS_STATS", bad);
    EXPECT_EQ(e.rfind("OVERPASS_STATS: invalid value '", 0), 0u) << bad << ": " << e;
    EXPECT_NE(e.find("a file path containing / or ."), std::string::npos) << e;
  }
  for (const char* table : {"1", "yes", "TRUE", "on"})
    EXPECT_EQ(parse({{"OVERPASS_STATS", table}}).config.statsMode, StatsMode::kTable) << table;
  for (const char* off : {"0", "no", "off", "false"})
    EXPECT_EQ(parse({{"OVERPASS_STATS", off}}).config.statsMode, StatsMode::kOff) << off;
  for (const char* path : {"stats.json", "./stats", "/dev/stdout", "out/2", "2.json"}) {
    const Config c = parse({{"OVERPASS_STATS", path}}).config;
    EXPECT_EQ(c.statsMode, StatsMode::kJson) << path;
    EXPECT_EQ(c.statsPath, path);
  }
}

TEST(StrictConfig, OneBooleanParserWithOneDocumentedSet) {
  std::size_t booleans = 0;
  for (const ConfigVar& v : configVars()) {
    // Every variable whose values begin with 0|1 documents the same set, and accepts exactly it.
    if (v.accepted.rfind("0|1", 0) != 0) continue;
    if (v.name != "OVERPASS_STATS") {
      EXPECT_EQ(v.accepted, kBooleanAccepted) << v.name;
      ++booleans;
    }
    const std::string name(v.name);
    for (const char* yes : {"1", "yes", "YES", "true", "True", "on", " on "})
      EXPECT_TRUE(parse({{name, yes}}).errors.empty()) << name << " " << yes;
    for (const char* no : {"0", "no", "false", "off", "OFF"})
      EXPECT_TRUE(parse({{name, no}}).errors.empty()) << name << " " << no;
    for (const char* bad : {"y", "n", "2", "tru", "enable", "0 1", "01"})
      EXPECT_EQ(parse({{name, bad}}).errors.size(), 1u) << name << " " << bad;
  }
  EXPECT_EQ(booleans, 4u);  // DISABLE, DETERMINISTIC, GPU_IPC, SIM_DEVICE
  EXPECT_EQ(kBooleanAccepted, "0|1 (or no|yes, false|true, off|on)");
  EXPECT_EQ(parseBoolean("On"), true);
  EXPECT_EQ(parseBoolean("n"), std::nullopt);
}

TEST(StrictConfig, TimeoutIsAPlainDecimalDurationWithItsLimitInTheMessage) {
  const std::pair<const char*, double> good[] = {
      {"0", 0},       {"2", 2},         {"2.5", 2.5},     {" 30 ", 30}, {"3s", 3},
      {"500ms", 0.5}, {"86400", 86400}, {"0.001", 0.001}, {"0.000", 0}, {"1000000us", 1}};
  for (const auto& [text, seconds] : good) {
    const ParsedConfig p = parse({{"OVERPASS_TIMEOUT", text}});
    EXPECT_TRUE(p.errors.empty()) << text;
    EXPECT_DOUBLE_EQ(p.config.timeoutSeconds, seconds) << text;
  }
  for (const char* bad : {"0x1p3", "1e-320", "-0", "1e3", "inf", "nan", "86401", "0.0001", "2.",
                          ".5", "1,5", "+2", "2 s", "5m", "1e400", "99999999999999999999"}) {
    const std::string e = errorOf("OVERPASS_TIMEOUT", bad);
    EXPECT_EQ(e.rfind("OVERPASS_TIMEOUT: invalid value '", 0), 0u) << bad << ": " << e;
    EXPECT_NE(e.find("0.001 to 86400 seconds"), std::string::npos) << e;
  }
  EXPECT_EQ(parseDuration("2us", true), 2e-6);
  EXPECT_EQ(parseDuration("2", true), std::nullopt);
}

TEST(StrictConfig, OneOverflowCheckedSizeParserWithExplicitBounds) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(parseSize("18446744073709551615", kMax), kMax);
  EXPECT_EQ(parseSize("18446744073709551616", kMax), std::nullopt);
  EXPECT_EQ(parseSize("16777215T", kMax), std::nullopt);
  EXPECT_EQ(parseSize("17179869183G", kMax), std::uint64_t{17179869183} << 30);
  EXPECT_EQ(parseSize("17179869184G", kMax), std::nullopt);  // 2^64: not a wrap to 0
  EXPECT_EQ(parseSize("8k", 8192), 8192u);
  EXPECT_EQ(parseSize("8k", 8191), std::nullopt);
  for (const char* bad : {"", "K", "8KB", "8 K", " 8", "-8", "8.5K", "0x10", "1e3"})
    EXPECT_EQ(parseSize(bad, kMax), std::nullopt) << bad;
  EXPECT_EQ(formatSize(131072), "128K");
  EXPECT_EQ(formatSize(0), "0");

  // OVERPASS_UCX_RNDV_THRESH: 2^70 used to be accepted (and handed to UCX).
  for (const char* bad : {"1180591620717411303424", "1048576T", "4194304G", "5G", "4294967297"}) {
    const std::string e = errorOf("OVERPASS_UCX_RNDV_THRESH", bad);
    EXPECT_EQ(e.rfind("OVERPASS_UCX_RNDV_THRESH: invalid value '", 0), 0u) << bad << ": " << e;
    EXPECT_NE(e.find("from 0 to 4G"), std::string::npos) << e;
  }
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "4G"}}).config.ucxRndvThresh, "4294967296");
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "0"}}).config.ucxRndvThresh, "0");
  EXPECT_EQ(parse({{"OVERPASS_UCX_RNDV_THRESH", "AUTO"}}).config.ucxRndvThresh, "auto");
  for (const char* var : {"OVERPASS_SHM_BUFFER", "OVERPASS_GPU_CHUNK"}) {
    EXPECT_EQ(parse({{var, "64M"}}).errors.size(), 0u) << var;
    EXPECT_EQ(parse({{var, "1G"}}).errors.size(), 1u) << var;
    EXPECT_EQ(parse({{var, "17592186044416M"}}).errors.size(), 1u) << var;  // 2^64 bytes
    EXPECT_EQ(parse({{var, "4095"}}).errors.size(), 1u) << var;
  }
}

TEST(StrictConfig, CostModelUsesTheDurationParser) {
  for (const char* bad : {"latency=0x1p3us", "latency=1e3us", "latency=2s", "latency=-0us",
                          "bandwidth=1e9GB/s", "reduce=0GB/s", ",latency=1us", "latency=1us,,"}) {
    const std::string e = errorOf("OVERPASS_COST_MODEL", bad);
    EXPECT_EQ(e.rfind("OVERPASS_COST_MODEL: invalid value '", 0), 0u) << bad << ": " << e;
  }
  const Config c = parse({{"OVERPASS_COST_MODEL", "latency=0.5ms, reduce = 100MB/s"}}).config;
  EXPECT_DOUBLE_EQ(c.costLatency, 5e-4);
  EXPECT_DOUBLE_EQ(c.costReduceBandwidth, 1e8);
}

std::uint64_t hashOf(const std::string& name, const std::string& value) {
  const ParsedConfig p = parse({{name, value}});
  EXPECT_TRUE(p.errors.empty()) << name << "=" << value;
  const auto vars = configVars();
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (vars[i].name == name) return agreementHashes(p)[i];
  ADD_FAILURE() << name;
  return 0;
}

TEST(StrictConfig, RanksCompareParsedValuesNotText) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> same = {
      {"OVERPASS_DISABLE", {"1", "yes", " TRUE ", "on"}},
      {"OVERPASS_SHM_BUFFER", {"128K", "131072", "128k", "", "0128K"}},
      {"OVERPASS_GPU_CHUNK", {"1M", "1024K", "1048576"}},
      {"OVERPASS_COLLS",
       {"^bcast",
        "allreduce,scatter,gather,alltoall,reduce,allgather,"
        "reduce_scatter_block,barrier,allgatherv,alltoallv,gatherv,scatterv,reduce_scatter,"
        "scan,exscan",
        "^ BCAST"}},
      {"OVERPASS_COLLS", {"all", "", "ALL"}},
      {"OVERPASS_STATS", {"0", "no", "off", ""}},
      {"OVERPASS_TRANSPORT", {"ucx", "UCX"}},
      {"OVERPASS_ALLREDUCE", {"ring", "RING", " ring"}},
      {"OVERPASS_COST_MODEL",
       {"latency=2us", "latency=2000ns,bandwidth=6GB/s", "bandwidth=6000MB/s", ""}},
  };
  for (const auto& [name, values] : same)
    for (const std::string& v : values)
      EXPECT_EQ(hashOf(name, v), hashOf(name, values[0])) << name << ": '" << v << "'";
  EXPECT_NE(hashOf("OVERPASS_SHM_BUFFER", "128K"), hashOf("OVERPASS_SHM_BUFFER", "64K"));
  EXPECT_NE(hashOf("OVERPASS_COLLS", "^bcast"), hashOf("OVERPASS_COLLS", "^barrier"));
  EXPECT_NE(hashOf("OVERPASS_DISABLE", "yes"), hashOf("OVERPASS_DISABLE", "no"));
  EXPECT_EQ(parse({{"OVERPASS_COLLS", "allreduce, bcast"}}).canonical[1], "allreduce,bcast");
  EXPECT_EQ(parse({{"OVERPASS_COLLS", "^alltoall,bcast"}}).canonical[1], "^bcast,alltoall");
}

TEST(StrictConfig, LongValuesAreShortenedNeverTheVariableName) {
  const std::string value(5000, 'x');
  for (const ConfigVar& v : configVars()) {
    const std::string name(v.name);
    // Every variable rejects this value (a newline is in no name, size, path or rule).
    const std::string e = errorOf(name, value + "\n");
    EXPECT_EQ(
        e.rfind(name + ": invalid value '" + std::string(200, 'x') + "... (5001 characters)';", 0),
        0u)
        << e.substr(0, 300);
    EXPECT_NE(e.find("accepted: " + std::string(v.accepted)), std::string::npos);
    EXPECT_LT(e.size(), 1000u);
  }
  EXPECT_EQ(shortened("a\nb"), "a\\x0ab");
  EXPECT_EQ(shortened("abcdef", 3), "abc... (6 characters)");
  EXPECT_EQ(shortened("abc", 3), "abc");
  const ParsedConfig p = parse({{"OVERPASS_" + std::string(3000, 'Q'), "1"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_LT(p.warnings[0].size(), 400u);
  EXPECT_NE(p.warnings[0].find("did you mean"), std::string::npos);
}

// Ranks as threads: an allgather through a barrier.
class ThreadBootstrap : public Bootstrap {
 public:
  struct Shared {
    explicit Shared(int n) : ranks(n), sync(n), slots(n) {}
    int ranks;
    std::barrier<> sync;
    std::vector<std::vector<char>> slots;
  };
  ThreadBootstrap(Shared& shared, int rank) : shared_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return shared_.ranks; }
  Status allgather(const void* in, void* out, std::size_t bytes) override {
    const char* from = static_cast<const char*>(in);
    shared_.slots[rank_].assign(from, from + bytes);
    shared_.sync.arrive_and_wait();
    for (int r = 0; r < shared_.ranks; ++r)
      std::memcpy(static_cast<char*>(out) + r * bytes, shared_.slots[r].data(), bytes);
    shared_.sync.arrive_and_wait();
    return Status::kOk;
  }

 private:
  Shared& shared_;
  int rank_;
};

// Each rank's environment -> each rank's comparison.
std::vector<ConfigComparison> compareAcross(const std::vector<Environment>& envs) {
  ThreadBootstrap::Shared shared(static_cast<int>(envs.size()));
  std::vector<ConfigComparison> out(envs.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < envs.size(); ++r)
    threads.emplace_back([&, r] {
      ThreadBootstrap bootstrap(shared, static_cast<int>(r));
      EXPECT_EQ(compareConfigurations(parseConfig(envs[r]), bootstrap, &out[r]), Status::kOk);
    });
  for (auto& t : threads) t.join();
  for (const ConfigComparison& c : out) {  // the same verdict everywhere
    EXPECT_EQ(c.mismatches, out[0].mismatches);
    EXPECT_EQ(c.firstRankWithErrors, out[0].firstRankWithErrors);
    EXPECT_EQ(c.firstRankWithWarnings, out[0].firstRankWithWarnings);
  }
  return out;
}

TEST(StrictConfig, MismatchNamesTheVariableFirstAndShowsBothRanksValues) {
  // Equal after parsing: no mismatch (these stopped the job when the raw text was compared).
  auto same = compareAcross({{{"OVERPASS_DISABLE", "1"}, {"OVERPASS_SHM_BUFFER", "128K"}},
                             {{"OVERPASS_DISABLE", "yes"}, {"OVERPASS_SHM_BUFFER", "131072"}},
                             {{"OVERPASS_DISABLE", "on"}}});
  EXPECT_TRUE(same[0].mismatches.empty());
  EXPECT_EQ(same[0].firstRankWithErrors, -1);

  auto differ = compareAcross({{},
                               {{"OVERPASS_LOG", "debug"}},
                               {{"OVERPASS_COLLS", "^bcast"}, {"OVERPASS_SHM_BUFFER", "64k"}}});
  ASSERT_EQ(differ[0].mismatches.size(), 2u);
  EXPECT_EQ(differ[0].mismatches[0],
            "OVERPASS_COLLS differs between ranks: rank 0 has 'all', rank 2 has '^bcast'; every "
            "rank must see the same value, or ranks would take different paths");
  EXPECT_EQ(
      differ[0].mismatches[1].rfind(
          "OVERPASS_SHM_BUFFER differs between ranks: rank 0 has '128K', rank 2 has '64K';", 0),
      0u);

  // A long value is shortened in the message, which still names the variable first.
  const std::string longTune = "allreduce:@ring#" + std::string(3000, 'b');
  auto long_ = compareAcross({{{"OVERPASS_TUNE", longTune}}, {}});
  ASSERT_EQ(long_[0].mismatches.size(), 1u);
  EXPECT_EQ(long_[0].mismatches[0].rfind(
                "OVERPASS_TUNE differs between ranks: rank 0 has 'allreduce:@ring#bbb", 0),
            0u);
  EXPECT_NE(long_[0].mismatches[0].find("... (3016 characters)', rank 1 has ''"),
            std::string::npos);

  // Errors and warnings: the lowest rank that has them.
  auto bad = compareAcross({{}, {{"OVERPASS_STAT", "1"}}, {{"OVERPASS_LOG", "loud"}}, {}});
  EXPECT_EQ(bad[0].firstRankWithErrors, 2);
  EXPECT_EQ(bad[0].firstRankWithWarnings, 1);
  EXPECT_TRUE(bad[0].mismatches.empty());
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/overpass-config-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

TEST(StrictConfig, LogLinesKeepTheVariableAndMarkACut) {
  TempDir dir;
  const std::string file = dir.path + "/log";
  logConfigure(LogLevel::kWarn, file, 3);
  const std::string medium(5000, 'm');
  OVERPASS_ERROR("%s: invalid value '%s' (long)", "OVERPASS_X", medium.c_str());
  const std::string huge(100000, 'h');
  OVERPASS_ERROR("OVERPASS_Y: %s", huge.c_str());
  logConfigure(LogLevel::kWarn, "", -1);
  const std::string text = readAll(file);
  const std::size_t newline = text.find('\n');
  ASSERT_NE(newline, std::string::npos);
  EXPECT_EQ(text.substr(0, newline),
            "[overpass 3] error: OVERPASS_X: invalid value '" + medium + "' (long)");
  const std::string second = text.substr(newline + 1);
  EXPECT_EQ(second.rfind("[overpass 3] error: OVERPASS_Y: hhh", 0), 0u);
  EXPECT_LE(second.size(), kMaxLogLine + 64);
  EXPECT_NE(second.find("... (line cut, 100012 characters)\n"), std::string::npos);
}

TEST(CheckedFiles, OnlyRegularFilesAreReadWithASizeCap) {
  TempDir dir;
  std::string text;
  EXPECT_EQ(readRegularFile("/dev/zero", &text), "not a regular file");
  EXPECT_EQ(readRegularFile(dir.path, &text), "a directory, not a regular file");
  EXPECT_EQ(readRegularFile(dir.path + "/missing", &text), "No such file or directory");
  // A FIFO with no writer: refused at once instead of waiting forever.
  const std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(readRegularFile(fifo, &text), "not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Larger than the cap (a sparse file: no disk used).
  const std::string big = dir.path + "/big";
  {
    const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kMaxReadFileBytes) + 1), 0);
    ::close(fd);
  }
  EXPECT_EQ(readRegularFile(big, &text), "larger than 64 MiB (67108865 bytes)");
  const std::string small = dir.path + "/small";
  ASSERT_EQ(writeWholeFile(small, "{\"ranks\": []}\n"), "");
  EXPECT_EQ(readRegularFile(small, &text), "");
  EXPECT_EQ(text, "{\"ranks\": []}\n");
  EXPECT_EQ(readRegularFile(small, &text, 4), "larger than 4 bytes (14 bytes)");
}

TEST(CheckedFiles, WritesAreChecked) {
  TempDir dir;
  EXPECT_EQ(checkWritable(dir.path + "/stats.json"), "");
  EXPECT_EQ(checkWritable(dir.path + "/no/such/dir/stats.json"), "No such file or directory");
  EXPECT_EQ(checkWritable(dir.path), "Is a directory");
  EXPECT_EQ(checkWritable("/dev/stdout"), "");
  const std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(checkWritable(fifo), "a FIFO or socket with no reader");  // not a hang
  EXPECT_EQ(writeWholeFile(fifo, "x"), "a FIFO or socket with no reader");
  // Opening /dev/full succeeds; writing to it fails, and so must the write.
  EXPECT_EQ(checkWritable("/dev/full"), "");
  EXPECT_EQ(writeWholeFile("/dev/full", "{}\n"), "No space left on device");
  const std::string file = dir.path + "/out.json";
  EXPECT_EQ(writeWholeFile(file, "first, longer\n"), "");
  EXPECT_EQ(writeWholeFile(file, "second\n"), "");
  EXPECT_EQ(readAll(file), "second\n");
}

}  // namespace
}  // namespace overpass
