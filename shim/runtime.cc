#include "shim/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include "coll/select/registry.h"
#include "common/files.h"
#include "common/log.h"
#include "gpu/memory.h"
#include "shim/comm_state.h"
#include "shim/hello.h"
#include "shim/nonblocking.h"
#include "shim/pmpi_transport.h"
#include "shim/type_map.h"
#include "shim/watchdog.h"
#include "shm/progress_board.h"
#include "topo/binding_audit.h"

namespace overpass::shim {

namespace {
// The model: see common/fiber.cc's tCurrent.
__attribute__((tls_model("initial-exec"))) thread_local bool tInside = false;
}  // namespace

__attribute__((noinline)) bool ReentryGuard::active() {
  return tInside;
}
__attribute__((noinline)) void ReentryGuard::set(bool active) {
  tInside = active;
}

Runtime& runtime() {
  static Runtime* rt = new Runtime();  // never destroyed: callbacks may run during exit
  return *rt;
}

namespace {

// Overpass is built against Open MPI 4.x; under any other MPI library (an application linked
// with MPICH, say) its PMPI_* references bind to that library, so pure pass-through still works.
__attribute__((constructor)) void checkMpiLibrary() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  PMPI_Get_library_version(version, &len);
  if (std::strncmp(version, "Open MPI v4.", 12) == 0) return;
  runtime().phase = Phase::kForeignMpi;
  const char* newline = std::strchr(version, '\n');
  std::fprintf(stderr,
               "overpass: liboverpass.so was built for Open MPI 4.x, but this process uses "
               "'%.*s'; Overpass passes every call through untouched\n",
               newline ? static_cast<int>(newline - version) : len, version);
}

void initializeUnguarded(int providedThreadLevel);

// Whether the progress thread runs: asked for, and the MPI library lets it call in.
bool progressThread(const Runtime& rt) {
  if (rt.config.progress != ProgressMode::kThread) return false;
  if (rt.threadLevel == MPI_THREAD_MULTIPLE) return true;
  if (rt.worldRank == 0)
    OVERPASS_WARN(
        "OVERPASS_PROGRESS=thread: the MPI library provides thread level %d, not "
        "MPI_THREAD_MULTIPLE; nonblocking collectives progress inside MPI calls only",
        rt.threadLevel);
  return false;
}

// How long rank 0 waits for every rank's start-up hello: without OVERPASS_TIMEOUT, and at least
// with it (ranks leave MPI_Init some seconds apart on a crowded machine; a short timeout must not
// make them look as if they ran without Overpass).
constexpr double kHelloSeconds = 60;
constexpr double kHelloMinSeconds = 10;

[[noreturn]] void stopJob() {
  stopWatchdog();  // MPI is being finalised under it
  PMPI_Finalize();
  std::exit(1);
}

// The ranks compare their parsed configurations (common/config.h); the job stops if a rank's
// configuration is malformed or the ranks disagree on a variable that changes paths.
void agreeOnConfiguration(const ParsedConfig& parsed, Bootstrap& bootstrap) {
  ConfigComparison comparison;
  if (compareConfigurations(parsed, bootstrap, &comparison) != Status::kOk) {
    OVERPASS_ERROR("cannot compare the configuration across ranks; stopping");
    stopJob();
  }
  const int me = bootstrap.rank();
  if (comparison.firstRankWithWarnings == me)
    for (const std::string& w : parsed.warnings) OVERPASS_WARN("%s", w.c_str());
  if (comparison.firstRankWithErrors >= 0) {
    if (comparison.firstRankWithErrors == me) {
      for (const std::string& e : parsed.errors) OVERPASS_ERROR("%s", e.c_str());
      OVERPASS_ERROR("stopping the job: fix the value%s above",
                     parsed.errors.size() > 1 ? "s" : "");
    }
    stopJob();
  }
  if (comparison.mismatches.empty()) return;
  if (me == 0)
    for (const std::string& m : comparison.mismatches) OVERPASS_ERROR("%s", m.c_str());
  if (me == 0) OVERPASS_ERROR("stopping the job");
  stopJob();
}

// Stops the job if any rank failed (`message` non-empty on the failing ranks): the lowest failing
// rank prints its message. Every rank must call it at the same point.
void stopIfAnyFailed(const std::string& message, Bootstrap& bootstrap) {
  const std::uint64_t mine = message.empty() ? 0 : 1;
  std::vector<std::uint64_t> all(bootstrap.size());
  if (bootstrap.allgather(&mine, all.data(), sizeof(mine)) != Status::kOk) stopJob();
  const auto first = std::find(all.begin(), all.end(), 1u);
  if (first == all.end()) return;
  if (first - all.begin() == bootstrap.rank())
    OVERPASS_ERROR("%s; stopping the job", message.c_str());
  stopJob();
}

std::string readFile(const std::string& path, std::string* error) {
  std::string text;
  if (const std::string problem = readRegularFile(path, &text); !problem.empty())
    *error = "OVERPASS_TOPO_FILE: cannot read topology file '" + shortened(path) + "': " + problem;
  return text;
}

// The job's topology: loaded from OVERPASS_TOPO_FILE, or probed by every rank and gathered; the
// node split emulated with OVERPASS_TOPO_RANKS_PER_NODE; dumped by rank 0 to OVERPASS_TOPO_DUMP.
// Rank 0 also checks here that it can write OVERPASS_STATS's file, so that a path that cannot be
// written stops the job now rather than losing the statistics at the end.
void setUpTopology(Runtime& rt, Bootstrap& bootstrap) {
  const Config& c = rt.config;
  std::string error;
  if (!c.topoFile.empty()) {
    const std::string text = readFile(c.topoFile, &error);
    if (error.empty() && !topologyFromJson(text, shortened(c.topoFile), &rt.job, &error))
      error = "OVERPASS_TOPO_FILE: " + error;
    else if (error.empty() && static_cast<int>(rt.job.ranks.size()) != rt.worldSize)
      error = "OVERPASS_TOPO_FILE: topology file '" + shortened(c.topoFile) + "': it describes " +
              std::to_string(rt.job.ranks.size()) + " ranks, the job has " +
              std::to_string(rt.worldSize);
  } else if (gatherLocalities(bootstrap, probeLocality(), &rt.job.ranks) != Status::kOk) {
    error = "cannot gather the ranks' localities";
  }
  stopIfAnyFailed(error, bootstrap);
  if (c.topoFile.empty() || c.topoRanksPerNode > 0)
    rt.job.node = nodeIndices(rt.job.ranks, c.topoRanksPerNode);
  if (rt.worldRank == 0) {
    auditBinding(rt.job);
    std::string problem;
    if (!c.topoDump.empty() &&
        !(problem = writeWholeFile(c.topoDump, topologyToJson(rt.job))).empty())
      error = "OVERPASS_TOPO_DUMP: cannot write '" + shortened(c.topoDump) + "': " + problem;
    else if (c.statsMode == StatsMode::kJson && !(problem = checkWritable(c.statsPath)).empty())
      error = "OVERPASS_STATS: cannot write '" + shortened(c.statsPath) + "': " + problem;
  }
  stopIfAnyFailed(error, bootstrap);  // every rank, whatever its own variables say
}

// Jobs up to this size connect every pair of ranks at start-up; larger ones on first use.
constexpr int kEagerConnectRanks = 256;

// Overpass's own UCX context: with OVERPASS_TRANSPORT=ucx, and with auto where the job spans
// several hosts. If UCX cannot start on some rank, every rank learns it in the address exchange
// and all use the PMPI transport.
void setUpUcx(Runtime& rt, Bootstrap& bootstrap) {
  const Locality& me = rt.job.ranks[rt.worldRank];
  const bool severalHosts =
      std::any_of(rt.job.ranks.begin(), rt.job.ranks.end(),
                  [&](const Locality& l) { return l.hostname != me.hostname; });
  if (rt.config.transport == TransportKind::kPmpi ||
      (rt.config.transport == TransportKind::kAuto && !severalHosts))
    return;
  UcxOptions options;
  options.multiThread = rt.threadLevel == MPI_THREAD_MULTIPLE;
  options.rndvThresh = rt.config.ucxRndvThresh;
  options.oversubscribed = rt.job.oversubscribed(rt.worldRank);
  for (const Locality& l : rt.job.ranks) {
    options.sameHost.push_back(l.hostname == me.hostname);
    // Process ids are only real when probed, not when loaded from OVERPASS_TOPO_FILE.
    const bool probed = rt.config.topoFile.empty();
    options.pids.push_back(probed && l.hostname == me.hostname ? l.pid : 0);
  }
  std::string error;
  rt.ucx = UcxContext::create(options, bootstrap, &error);
  if (rt.ucx && rt.worldSize <= kEagerConnectRanks && rt.ucx->connectAll(bootstrap) != Status::kOk)
    OVERPASS_WARN("UCX: connecting all ranks at start-up failed; endpoints connect on first use");
  if (rt.ucx && logEnabled(LogLevel::kDebug)) {
    for (int r = 0; r < rt.worldSize; ++r)
      if (r != rt.worldRank)
        OVERPASS_DEBUG("UCX path to world rank %d (%s, %s host): %s", r,
                       rt.job.ranks[r].hostname.c_str(), options.sameHost[r] ? "this" : "another",
                       rt.ucx->describePath(r).c_str());
  }
  if (!rt.ucx && rt.worldRank == 0)
    OVERPASS_WARN("%s; using the PMPI transport (OVERPASS_TRANSPORT=pmpi)", error.c_str());
}

void reportStatistics(Runtime& rt) {
  std::vector<std::uint64_t> counters = rt.stats.counters(), counterSums(counters.size());
  std::vector<double> times = rt.stats.times(), sums(times.size()), mins(times.size()),
                      maxs(times.size());
  const int n = static_cast<int>(times.size());
  PMPI_Reduce(counters.data(), counterSums.data(), static_cast<int>(counters.size()), MPI_UINT64_T,
              MPI_SUM, 0, rt.world);
  PMPI_Reduce(times.data(), sums.data(), n, MPI_DOUBLE, MPI_SUM, 0, rt.world);
  PMPI_Reduce(times.data(), mins.data(), n, MPI_DOUBLE, MPI_MIN, 0, rt.world);
  PMPI_Reduce(times.data(), maxs.data(), n, MPI_DOUBLE, MPI_MAX, 0, rt.world);
  if (rt.worldRank != 0) return;
  const StatsReport report{rt.worldSize, counterSums, sums, mins, maxs, algorithmNames()};
  if (rt.config.statsMode == StatsMode::kTable) {
    const std::string table = formatStatsTable(report);
    std::fputs(table.c_str(), stderr);
    return;
  }
  const std::string problem = writeWholeFile(rt.config.statsPath, formatStatsJson(report));
  if (problem.empty()) return;
  // Too late to stop the job cleanly: say so, and make this process end with status 1 (after
  // the program's own exit, its C streams flushed) so that the launcher reports a failure.
  OVERPASS_ERROR("OVERPASS_STATS: cannot write '%s': %s; this process will exit with status 1",
                 shortened(rt.config.statsPath).c_str(), problem.c_str());
  std::atexit([] {
    std::fflush(nullptr);
    std::_Exit(1);
  });
}

// Overpass's part of MPI_Finalize, under watch: on the progress board it is the last call on the
// world's members, so a rank still in an earlier collective shows as behind.
constexpr std::uint64_t kTeardownCall = std::uint64_t{1} << 62;
void finalizeUnwatched(Runtime& rt);

// Delete callback of the attribute on MPI_COMM_SELF: the start of MPI_Finalize, while every
// collective still works.
int finalizeRuntime(MPI_Comm, int, void*, void*) {
  Runtime& rt = runtime();
  ReentryGuard guard;
  {
    WatchedCall watch(BoardRecord::kTeardown, MPI_COMM_WORLD);
    if (watch.active()) watch.identify(boardKey(MPI_COMM_WORLD), kTeardownCall);
    finalizeUnwatched(rt);
  }
  stopWatchdog();
  rt.phase = Phase::kFinalized;
  OVERPASS_DEBUG("finalized");
  return MPI_SUCCESS;
}

void finalizeUnwatched(Runtime& rt) {
  stopNonblockingEngine();  // the outstanding nonblocking collectives complete first
  if (rt.config.statsMode != StatsMode::kOff) reportStatistics(rt);
  releaseCommStates();
  if (rt.ucx) {
    rt.ucx->closing();
    PMPI_Barrier(rt.world);  // no peer still sends to us
    rt.ucx.reset();
  }
  PMPI_Comm_free(&rt.world);
}

}  // namespace

namespace {

void initializeRuntime(int providedThreadLevel) {
  try {
    initializeUnguarded(providedThreadLevel);
  } catch (const std::exception& e) {  // never across the C ABI
    // The other ranks may have finished their set-up and would take Overpass's paths while this
    // one could not: stopping is the only way to avoid a hang.
    OVERPASS_ERROR("initialisation failed (%s); aborting the job", e.what());
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace

int initializeMpi(int* argc, char*** argv, const int* required, int* provided) {
  const Config config = parseConfig(processEnvironment()).config;
  const bool thread = !config.disable && config.progress == ProgressMode::kThread;
  int level = MPI_THREAD_SINGLE;
  const int rc =
      required || thread
          ? PMPI_Init_thread(argc, argv, thread ? MPI_THREAD_MULTIPLE : *required, &level)
          : PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS && !required && !thread) PMPI_Query_thread(&level);
  if (provided) *provided = level;
  if (rc == MPI_SUCCESS) initializeRuntime(level);
  return rc;
}

namespace {

void initializeUnguarded(int providedThreadLevel) {
  Runtime& rt = runtime();
  if (rt.phase != Phase::kBeforeInit) return;
  ReentryGuard guard;
  rt.threadLevel = providedThreadLevel;
  ParsedConfig parsed = parseConfig(processEnvironment());
  std::optional<Selector> selector = Selector::create(parsed.config, &parsed.errors);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rt.worldRank);
  PMPI_Comm_size(MPI_COMM_WORLD, &rt.worldSize);
  logConfigure(parsed.config.logLevel, parsed.config.logFile, rt.worldRank);
  // Before any collective: a rank without Overpass would pair with them (shim/hello.h).
  const double timeout = parsed.config.timeoutSeconds;
  checkEveryRankRunsOverpass(timeout > 0 ? std::max(timeout, kHelloMinSeconds) : kHelloSeconds);
  // The watchdog runs where this rank's value asks for it, before the ranks agreed on it, so
  // that the agreement itself is watched.
  if (!parsed.config.disable) startWatchdog(timeout, rt.worldRank);
  WatchedCall watch(BoardRecord::kStartup, MPI_COMM_WORLD);
  PMPI_Comm_dup(MPI_COMM_WORLD, &rt.world);
  PMPI_Comm_set_name(rt.world, "overpass_world");
  PmpiBootstrap bootstrap(rt.world);
  agreeOnConfiguration(parsed, bootstrap);
  rt.config = parsed.config;
  rt.selector = std::move(*selector);
  attachProgressBoard(!rt.config.disable && rt.config.timeoutSeconds > 0, bootstrap);
  if (watch.active()) watch.identify(boardKey(MPI_COMM_WORLD), 0);
  initDeviceMemory(rt.config.simulatedDevice);
  setUpTopology(rt, bootstrap);
  setUpUcx(rt, bootstrap);

  initTypeMap();
  if (initCommStates() != MPI_SUCCESS ||
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizeRuntime, &rt.selfKeyval, nullptr) !=
          MPI_SUCCESS ||
      PMPI_Comm_set_attr(MPI_COMM_SELF, rt.selfKeyval, nullptr) != MPI_SUCCESS) {
    OVERPASS_ERROR("cannot create MPI attributes; aborting the job (ranks would diverge)");
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (!rt.config.disable) {
    startNonblockingEngine(progressThread(rt), rt.job.oversubscribed(rt.worldRank));
    // MPI_COMM_WORLD has no warm-up: its engine is built here, where every rank is, rather than
    // at its first collective, so that nonblocking collectives are served from the first one
    // (a nonblocking call cannot build it: that is collective and blocking).
    int rc = MPI_SUCCESS;
    CommState* world = commState(MPI_COMM_WORLD, &rc);
    if (!world || startEngine(MPI_COMM_WORLD, *world) != MPI_SUCCESS) {
      OVERPASS_ERROR("cannot set up MPI_COMM_WORLD; aborting the job (ranks would diverge)");
      PMPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  rt.phase = rt.config.disable ? Phase::kDisabled : Phase::kActive;
  OVERPASS_INFO("initialised: %d ranks, thread level %d, %s", rt.worldSize, providedThreadLevel,
                rt.config.disable ? "disabled (pass-through)" : "active");
}

}  // namespace

std::optional<FallbackReason> globalFallback(Collective coll) {
  const Runtime& rt = runtime();
  switch (rt.phase.load(std::memory_order_acquire)) {
    case Phase::kActive:
      break;
    case Phase::kDisabled:
      return FallbackReason::kDisabled;
    default:
      return FallbackReason::kNotInitialized;
  }
  if (ReentryGuard::active()) return FallbackReason::kReentry;
  if (!rt.config.handles(coll)) return FallbackReason::kExcluded;
  return std::nullopt;
}

}  // namespace overpass::shim
