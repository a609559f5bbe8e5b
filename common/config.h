// The one table of OVERPASS_* variables: name, default, accepted values, help, and whether every
// rank must agree on it. Parsed once, strictly, by one parser per kind of value (booleans, sizes,
// counts, durations, paths, lists, names): a malformed value is an error naming the variable
// first, then the value and what is accepted; an unknown OVERPASS_* name is a warning with the
// nearest name. An empty value means the default, as if unset; a value of only blanks is an error.
// Ranks compare the canonical form of each parsed value, never the raw text.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bootstrap.h"
#include "common/collective.h"
#include "common/log.h"
#include "common/text.h"

namespace overpass {

enum class StatsMode { kOff, kTable, kJson };
// kAuto: PMPI on one host; across hosts, UCX for small inter-host messages (transport/
// split_transport.h).
enum class TransportKind { kAuto, kUcx, kPmpi };
// Who advances nonblocking collectives (shim/nonblocking.h): the application's MPI calls only, or
// also a progress thread of Overpass's.
enum class ProgressMode { kCalls, kThread };

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
  TransportKind transport = TransportKind::kAuto;
  double timeoutSeconds = 0;  // 0: no timeout
  std::string ucxRndvThresh;  // "" : UCX's default; "auto"; or a number of bytes
  std::size_t shmBuffer = 0;  // bytes per rank and round of the shared-memory engine; 0: off
  unsigned commWarmUp = 0;    // calls on a new communicator handed to the MPI library first
  std::string tune;           // OVERPASS_TUNE rules (coll/select/tune.h)
  std::array<std::string, kNumCollectives> forced;  // OVERPASS_<COLLECTIVE>: an algorithm name
  bool deterministic = false;
  // OVERPASS_CORE_DISTANCE: this rank's verdict on how far its peer's core is (true: far) in the
  // readings of two-rank teams (shm/core_distance.h); none: measured.
  std::optional<bool> coresFar;
  // OVERPASS_RACE_VOTE: this rank's vote in every race (coll/select/race.h), 0 for a race's first
  // algorithm, 1 for its second; none: its own timings.
  std::optional<int> raceVote;
  ProgressMode progress = ProgressMode::kCalls;
  std::size_t fusion = 0;    // bytes up to which consecutive nonblocking allreduces fuse; 0: off
  std::size_t gpuChunk = 0;  // bytes per chunk of the device staging pipeline; 0: off
  int gpuDepth = 3;          // its host slots per direction
  bool gpuIpc = true;        // device buffers of one node's ranks exchanged through IPC
  bool simulatedDevice = false;  // OVERPASS_SIM_DEVICE: gpu/sim_device.h's window is device memory
  // The cost model (coll/select/cost_model.h): seconds per message, bytes per second sent and
  // reduced.
  double costLatency = 0, costBandwidth = 0, costReduceBandwidth = 0;

  bool handles(Collective c) const { return colls.test(index(c)); }
};

struct ConfigVar {
  std::string_view name;
  std::string_view defaultValue;
  std::string_view accepted;  // what values are accepted, for help and error messages
  std::string_view help;
  bool agreed;  // changes which path a collective takes, so every rank must have the same value
  // Sets the variable's fields of `config` and returns the value's canonical text (equal for
  // values that mean the same: "1" and "yes", "128K" and "131072"); nullopt: malformed.
  std::optional<std::string> (*parse)(std::string_view value, Config& config);
};

std::span<const ConfigVar> configVars();

// name=value pairs as found in the environment (only OVERPASS_* matter).
using Environment = std::vector<std::pair<std::string, std::string>>;
Environment processEnvironment();

struct ParsedConfig {
  Config config;
  std::vector<std::string> values;     // effective text value per variable (default if unset)
  std::vector<std::string> canonical;  // its canonical form (the default's for a malformed one)
  std::vector<std::string> errors;     // malformed values: the job must stop
  std::vector<std::string> warnings;   // unknown OVERPASS_* names
};

ParsedConfig parseConfig(const Environment& env);

// One hash per variable of configVars() (0 for variables that need no agreement): of the
// canonical value, for comparing the effective configuration across ranks.
std::vector<std::uint64_t> agreementHashes(const ParsedConfig& parsed);

// What the ranks found when they compared their configurations; the same on every rank.
struct ConfigComparison {
  int firstRankWithErrors = -1;    // the lowest rank with a malformed value, or -1
  int firstRankWithWarnings = -1;  // the lowest rank with an unknown name, or -1
  // One message per agreed variable that differs between ranks (empty when a rank has errors),
  // naming the variable first and showing rank 0's value and the first other rank's value.
  std::vector<std::string> mismatches;
};

// Collective over the bootstrap: every rank must call it, at the same point.
Status compareConfigurations(const ParsedConfig& parsed, Bootstrap& bootstrap,
                             ConfigComparison* out);

// The parsers of the kinds of value, shared by every variable of that kind and by the tune
// grammar (the variables' parsers drop the blanks around a value first; these accept none):
// - a boolean: 0|1, no|yes, false|true, off|on (any case), kBooleanAccepted;
std::optional<bool> parseBoolean(std::string_view text);
inline constexpr std::string_view kBooleanAccepted = "0|1 (or no|yes, false|true, off|on)";
// - a count: decimal digits only, at most `hi`;
std::optional<std::uint64_t> parseCount(std::string_view text, std::uint64_t hi);
// - a size: parseSize and formatSize of common/text.h (the variables take its base form: decimal
//   digits with an optional K, M or G suffix, x1024, any case);
// - a duration in seconds: a plain decimal number (digits, optionally '.' and digits; no sign,
//   exponent or hex) with a unit ns|us|ms|s, which may be left out (seconds) unless unitRequired.
std::optional<double> parseDuration(std::string_view text, bool unitRequired);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t editDistance(std::string_view a, std::string_view b);

}  // namespace overpass
