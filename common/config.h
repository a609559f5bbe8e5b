// The one table of OVERPASS_* variables: name, default, accepted values, help, and whether every
// rank must agree on it. Parsed once, strictly: a malformed value is an error naming the variable,
// the value and what is accepted; an unknown OVERPASS_* name is a warning with the nearest name.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/collective.h"
#include "common/log.h"

namespace overpass {

enum class StatsMode { kOff, kTable, kJson };
enum class TransportKind { kUcx, kPmpi };

struct Config {
  bool disable = false;
  std::bitset<kNumCollectives> colls;  // collectives Overpass handles
  LogLevel logLevel = LogLevel::kWarn;
  std::string logFile;
  StatsMode statsMode = StatsMode::kOff;
  std::string statsPath;     // for kJson
  std::string topoDump;      // write the job's topology here at initialisation
  std::string topoFile;      // load the job's topology from here instead of probing
  int topoRanksPerNode = 0;  // > 0: emulate nodes of this many consecutive ranks
  TransportKind transport = TransportKind::kPmpi;
  double timeoutSeconds = 0;  // 0: no timeout
  std::string ucxRndvThresh;  // "" : UCX's default
  std::size_t shmBuffer = 0;  // bytes per rank and round of the shared-memory engine; 0: off
  unsigned commWarmUp = 0;    // calls on a new communicator handed to the MPI library first
  std::string tune;           // OVERPASS_TUNE rules (coll/tune.h)
  std::array<std::string, kNumCollectives> forced;  // OVERPASS_<COLLECTIVE>: an algorithm name
  bool deterministic = false;
  std::size_t gpuChunk = 0;      // bytes per chunk of the device staging pipeline; 0: off
  int gpuDepth = 3;              // its host slots per direction
  bool gpuIpc = true;            // device buffers of one node's ranks exchanged through IPC
  bool simulatedDevice = false;  // OVERPASS_SIM_DEVICE: gpu/sim_device.h's window is device memory
  // The cost model (coll/cost_model.h): seconds per message, bytes per second sent and reduced.
  double costLatency = 0, costBandwidth = 0, costReduceBandwidth = 0;

  bool handles(Collective c) const { return colls.test(index(c)); }
};

struct ConfigVar {
  std::string_view name;
  std::string_view defaultValue;
  std::string_view accepted;  // what values are accepted, for help and error messages
  std::string_view help;
  bool agreed;  // changes which path a collective takes, so every rank must have the same value
  bool (*parse)(std::string_view value, Config& config);  // false: malformed
};

std::span<const ConfigVar> configVars();

// name=value pairs as found in the environment (only OVERPASS_* matter).
using Environment = std::vector<std::pair<std::string, std::string>>;
Environment processEnvironment();

struct ParsedConfig {
  Config config;
  std::vector<std::string> values;    // effective text value per variable (default if unset)
  std::vector<std::string> errors;    // malformed values: the job must stop
  std::vector<std::string> warnings;  // unknown OVERPASS_* names
};

ParsedConfig parseConfig(const Environment& env);

// One hash per variable of configVars() (0 for variables that need no agreement), for comparing
// the effective configuration across ranks.
std::vector<std::uint64_t> agreementHashes(const ParsedConfig& parsed);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t editDistance(std::string_view a, std::string_view b);

}  // namespace overpass
