#include "shim/dispatch.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <optional>

#include "coll/select/selector.h"
#include "common/log.h"
#include "common/progress.h"
#include "gpu/memory.h"
#include "gpu/staging_pipeline.h"
#include "shim/comm_state.h"
#include "shim/device_staging.h"
#include "shim/nonblocking.h"
#include "shim/runtime.h"
#include "shim/watchdog.h"
#include "transport/split_transport.h"

namespace overpass::shim {
namespace {

// Whether `type` was made by the program (it may be freed, and its handle come back for another).
bool derived(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return false;
  int ints = 0, addresses = 0, datatypes = 0, combiner = MPI_COMBINER_NAMED;
  PMPI_Type_get_envelope(type, &ints, &addresses, &datatypes, &combiner);
  return combiner != MPI_COMBINER_NAMED;
}

// A call's size as the statistics count it (docs/STATS.md, the nccl-tests convention): the whole
// buffer of p blocks for the block collectives, the vector for the others; this rank's own bytes
// where the ranks know different sizes.
std::uint64_t statisticsBytes(const CallShape& s, const Call& call) {
  switch (s.coll) {
    case Collective::kAlltoallv:  // no size every rank shares: this rank's own bytes
    case Collective::kGatherv:
    case Collective::kScatterv:
      return call.size > 0 ? call.ownBytes() : 0;
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kAllgather:
    case Collective::kAlltoall:
    case Collective::kReduceScatterBlock:
    case Collective::kAllgatherv:  // the mean block: the whole buffer
    case Collective::kReduceScatter:
      return static_cast<std::uint64_t>(s.bytes) * static_cast<std::uint64_t>(s.teamSize);
    default:
      return s.bytes;
  }
}

}  // namespace

int raiseError(MPI_Comm comm, int code) {
  if (comm == MPI_COMM_NULL) return code;
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

int errorCode(CommState& state, Status status) {
  Transport* transport = state.engine->transport.get();
  if (auto* split = dynamic_cast<SplitTransport*>(transport)) transport = &split->near();
  if (auto* pmpi = dynamic_cast<PmpiTransport*>(transport))
    if (const int rc = pmpi->takeLastError(); rc != MPI_SUCCESS) return rc;
  switch (status) {
    case Status::kNoMemory:
      return MPI_ERR_NO_MEM;
    case Status::kInvalidArgument:
      return MPI_ERR_ARG;
    case Status::kInternal:
      return MPI_ERR_INTERN;
    default:
      return MPI_ERR_OTHER;
  }
}

namespace {

Selection selectFor(const CallShape& s, std::span<const Algorithm* const> excluded) {
  const Selection chosen = runtime().selector.select(s, excluded);
  if (chosen.skipped)
    OVERPASS_DEBUG("%s of %zu bytes on %d ranks: rule '%s' skipped, %s cannot serve it%s",
                   collectiveName(s.coll).data(), s.bytes, s.teamSize, chosen.skipped->text.c_str(),
                   chosen.skipped->algorithm->name.data(),
                   s.ordered ? " in deterministic mode" : "");
  return chosen;
}

// The algorithm for `shape` on the communicator, and a race's rival, memoised.
SelectionCache::Choice selectAlgorithm(CommState& state, const CallShape& shape) {
  return state.engine->selections.get(shape, selectFor);
}

// A blocking call of `race` (coll/select/race.h): at its decision, every rank's medians of its
// trials, the largest over the ranks (one allreduce on Overpass's communicator), decide the
// winner. An MPI error code.
int paceRace(CommState& state, Race& race, const CallShape& shape) {
  if (race.step() != Race::Step::kDecide) return MPI_SUCCESS;
  std::array<double, 2> times = race.medians(runtime().config.raceVote);
  if (const int rc =
          PMPI_Allreduce(MPI_IN_PLACE, times.data(), 2, MPI_DOUBLE, MPI_MAX, state.engine->dup);
      rc != MPI_SUCCESS)
    return rc;
  race.decide(times);
  OVERPASS_DEBUG(
      "race of %s, %zu bytes on %d ranks: %s %.0f ns, %s %.0f ns (the slowest rank's "
      "medians of %u calls each): %s",
      collectiveName(shape.coll).data(), shape.bytes, shape.teamSize, race.first().name.data(),
      times[0], race.second().name.data(), times[1], static_cast<unsigned>(Race::kTrials),
      race.runner().name.data());
  return MPI_SUCCESS;
}

// An algorithm's error: raised through the communicator's error handler by a blocking call; a
// nonblocking operation returns it in its request's status instead.
int raise(const Call& call, int rc) {
  return call.inOperation ? rc : raiseError(call.comm, rc);
}

// Inside a nonblocking operation: polls the MPI library's request `inner` until it completes,
// the fiber yielding in between. An MPI error code.
int waitInOperation(MPI_Request* inner) {
  int rc = MPI_SUCCESS;
  for (int flag = 0; rc == MPI_SUCCESS && !flag;) {
    rc = PMPI_Test(inner, &flag, MPI_STATUS_IGNORE);
    if (!flag) idle(false);
  }
  return rc;
}

// Inside a nonblocking operation whose algorithm declined (alike on every rank): the MPI
// library's nonblocking collective on Overpass's own communicator (the application's may carry
// later calls already, posted straight to the MPI library).
int pmpiInOperation(CommState& state, const Call& call) {
  MPI_Request inner = MPI_REQUEST_NULL;
  const int rc = call.pmpiOn(state.engine->dup, &inner);
  return rc == MPI_SUCCESS ? waitInOperation(&inner) : rc;
}

// The channel of a communicator of two ranks on one node, whose blocking calls pace the readings
// of how far apart their cores are (shm/core_distance.h); null elsewhere.
ShmChannel* pairChannel(const CommEngine& engine) {
  return engine.shm && engine.topology.singleNode() && engine.shm->size() == 2 ? engine.shm.get()
                                                                               : nullptr;
}

// The engine's facts in a call's shape. The device algorithms and the pipeline are blocking:
// nonblocking calls take host ones.
void describeEngine(CallShape& shape, const CommEngine& engine, bool nonblocking) {
  shape.shmBuffer = engine.shm && engine.topology.singleNode() ? engine.shm->bufferBytes() : 0;
  shape.nodes = engine.topology.nodeCount();
  shape.maxPerNode = engine.topology.maxRanksPerNode();
  shape.mem = engine.deviceCapable && !nonblocking ? CallMemory::kDevice : CallMemory::kHost;
  const ShmChannel* pair = pairChannel(engine);
  shape.cores = pair ? pair->cores().agreed : CoreDistance::kUnread;
}

// A blocking call of Overpass's on the communicator, counted where its two ranks share a node,
// and at every CoreReading::kEvery-th one both read how far apart their cores are, before the
// selection that may depend on it (the tune key cores=). Where the agreed reading changes, every
// thread's repeated calls are decided afresh. An MPI error code.
int paceCores(CommState& state, CallShape& shape) {
  ShmChannel* pair = pairChannel(*state.engine);
  if (!pair) return MPI_SUCCESS;
  bool changed = false;
  if (const Status s = paceCoreDistance(*pair, runtime().config.coresFar, &changed);
      s != Status::kOk)
    return errorCode(state, s);
  if (changed) commStateChanged();
  shape.cores = pair->cores().agreed;
  return MPI_SUCCESS;
}

// This rank's significant buffers and whether each lies in device memory: classified once per
// call, and only where a device backend is active.
struct Memory {
  CallBuffer buffers[2];
  bool device[2] = {false, false};
  int count = 0;
  bool any() const { return device[0] || device[1]; }
  bool all() const {
    for (int i = 0; i < count; ++i)
      if (!device[i]) return false;
    return count > 0;
  }
};

Memory classify(const Call& call, DeviceMemory& memory) {
  Memory m;
  m.count = call.buffers(m.buffers);
  for (int i = 0; i < m.count; ++i) {
    const CallBuffer& b = m.buffers[i];
    m.device[i] = b.count > 0 && onDevice(memory, call.buffer(b.side));
  }
  return m;
}

// A device algorithm on the application's buffers (coll/device/device_ipc.h). Status::kDeclined
// where the ranks agreed in its first round that it cannot serve the call (nothing was done).
Status runDevice(CommState& state, const Call& call, const Algorithm& algorithm,
                 const Memory& memory) {
  Team team = state.team();
  team.device = deviceMemory();
  team.deviceScratch = &state.engine->deviceScratch;
  CollArgs args = call.deviceArgs();
  args.onDevice = memory.all();
  ReentryGuard guard;
  return algorithm.run(args, team);
}

// The staging pipeline (docs/GPU.md): every rank runs the call as the same sequence of chunk
// calls, each selected for its size as a call on host memory, this rank's device buffers moving
// through host slots while the neighbouring chunks' collectives run. Its first round agrees
// whether any rank passes device memory (one small allreduce on the private communicator);
// where none does it declines, alike on every rank, and the memo passes it over for this shape
// (until SelectionCache::kRetryAfter calls of it), so a host-only program pays it rarely.
Status runPipeline(CommState& state, const Call& call, const CallShape& shape, const Memory& memory,
                   int* rc) {
  DeviceMemory* device = deviceMemory();
  const bool inDevice = memory.count > 0 && memory.buffers[0].read && memory.device[0];
  const bool outDevice = memory.count > 0 && memory.buffers[memory.count - 1].written &&
                         memory.device[memory.count - 1];
  int mine = memory.any(), any = 0;
  {
    ReentryGuard guard;
    if ((*rc = PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, state.engine->dup)) != MPI_SUCCESS)
      return Status::kInternal;
  }
  if (!any) return Status::kDeclined;
  const Config& config = runtime().config;
  DeviceMemory& lanes = device ? *device : hostMemory();
  const std::size_t e = call.red.elementBytes;
  const PipelinePlan plan{shape.bytes, std::max(e, config.gpuChunk / e * e), config.gpuDepth};
  auto* staging =
      static_cast<unsigned char*>(state.deviceStaging.get(0, pipelineStagingBytes(plan), lanes));
  if (!staging) {
    *rc = MPI_ERR_NO_MEM;
    return Status::kNoMemory;
  }
  OVERPASS_TRACE("%s: %zu bytes in chunks of %zu through the staging pipeline",
                 collectiveName(shape.coll).data(), shape.bytes, plan.chunk);
  void* out = call.output();
  const Status status =
      runPipelined(lanes, call.input(), inDevice, out, outDevice, plan, staging,
                   [&](std::size_t, std::size_t bytes, const void* hostIn, void* hostOut) {
                     Call chunk = call.chunk(hostIn, hostOut, bytes / e);
                     CallShape chunkShape = shape;
                     chunkShape.bytes = bytes;
                     chunkShape.count = bytes / e;
                     chunkShape.mem = CallMemory::kHost;
                     const Algorithm& algorithm = *selectAlgorithm(state, chunkShape).algorithm;
                     ReentryGuard guard;
                     *rc = algorithm.isPmpi() ? chunk.pmpi() : chunk.run(state, algorithm);
                     if (*rc == kDeclinedCall) *rc = chunk.pmpi();
                     return *rc == MPI_SUCCESS ? Status::kOk : Status::kInternal;
                   });
  if (status != Status::kOk && *rc == MPI_SUCCESS) *rc = MPI_ERR_OTHER;
  return status;
}

// The call itself: the host algorithm, or the MPI library where there is a reason. An algorithm
// that declines (coll/algorithms.h; alike on every rank, nothing done) hands the call to the MPI
// library: *reason becomes kDeclined.
int runHere(CommState* state, Call& call, const Algorithm* algorithm,
            std::optional<FallbackReason>* reason) {
  int rc = MPI_SUCCESS;
  if (!*reason) {
    OVERPASS_TRACE("%s: %s", collectiveName(call.coll).data(), algorithm->name.data());
    ReentryGuard guard;
    rc = call.run(*state, *algorithm);
    if (rc == kDeclinedCall)
      *reason = FallbackReason::kDeclined;
    else if (rc != MPI_SUCCESS)
      rc = raise(call, rc);
  }
  if (*reason) {
    OVERPASS_DEBUG("%s: MPI library (%s)", collectiveName(call.coll).data(),
                   fallbackReasonName(**reason).data());
    rc = call.inOperation ? pmpiInOperation(*state, call) : call.pmpi();
  }
  return rc;
}

// The same, this rank's device buffers replaced by host copies for the call
// (shim/device_staging.h): a function of its own, so that the calls without device buffers
// never build the staging object.
// Replaces this rank's device buffers of `call` by host copies held by `staging`. An MPI error
// code.
int stage(DeviceStaging& staging, Call& call, const Memory& memory) {
  for (int i = 0; i < memory.count; ++i) {
    if (!memory.device[i]) continue;
    const CallBuffer& b = memory.buffers[i];
    MPI_Aint lb = 0, extent = 0;  // a span that starts before the pointer: staged from its start
    if (b.first) PMPI_Type_get_extent(b.type, &lb, &extent);
    const std::ptrdiff_t before = b.first * extent;
    const void* p = static_cast<const char*>(call.buffer(b.side)) + before;
    if (const int rc = staging.add(p, b.count, b.type, b.read, b.written); rc != MPI_SUCCESS)
      return rc;
    call.setBuffer(b.side, const_cast<char*>(static_cast<const char*>(p) - before));
  }
  return MPI_SUCCESS;
}

int runStaged(CommState* state, Call& call, const Algorithm* algorithm, const Memory& memory,
              HostStaging& host, std::optional<FallbackReason>* reason) {
  DeviceStaging staging(*deviceMemory(), host);
  if (const int rc = stage(staging, call, memory); rc != MPI_SUCCESS) return raise(call, rc);
  int rc = runHere(state, call, algorithm, reason);
  if (rc == MPI_SUCCESS) {
    rc = staging.finish();
    if (rc != MPI_SUCCESS) rc = raise(call, rc);
  }
  return rc;
}

// Statistics of one call (OVERPASS_STATS): what served it, from `start` to now; `shape` null where
// the arguments were invalid.
void record(const Call& call, const CallShape* shape, const Algorithm* algorithm,
            const std::optional<FallbackReason>& reason, const Memory& memory,
            std::chrono::steady_clock::time_point start) {
  Stats& stats = runtime().stats;
  const StatsRow row(call.coll, call.request != nullptr);
  if (reason) {
    algorithm = &pmpiAlgorithm(call.coll);
    stats.recordFallback(row, *reason);
  }
  if (memory.any()) stats.recordDevice(row);
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  stats.record(row, shape ? statisticsBytes(*shape, call) : 0, algorithmId(*algorithm),
               static_cast<std::uint64_t>(ns));
}

// A nonblocking call on the MPI library's path with device buffers on this rank: the host copies
// go to the MPI library's nonblocking collective at once, and an operation of the engine waits
// for it and copies the results back to the device before the application's request completes.
int startStagedPmpi(CommState& state, Call& call, const Memory& memory) {
  struct Staged {
    explicit Staged(DeviceMemory& device) : staging(device, host) {}
    HostStaging host;  // its own: the communicator's serves one call at a time
    DeviceStaging staging;
    MPI_Request inner = MPI_REQUEST_NULL;
  };
  auto staged = std::make_shared<Staged>(*deviceMemory());
  int rc = stage(staged->staging, call, memory);
  if (rc == MPI_SUCCESS) rc = call.pmpiOn(call.comm, &staged->inner);
  if (rc != MPI_SUCCESS) return raiseError(call.comm, rc);
  auto body = [staged] {
    const int rc = waitInOperation(&staged->inner);
    return rc == MPI_SUCCESS ? staged->staging.finish() : rc;
  };
  rc = startOperation(state, call, std::move(body), std::nullopt, deviceMemory()->context());
  return rc == MPI_SUCCESS ? rc : raiseError(call.comm, rc);
}

// Inside an operation: `call` (a reduction on contiguous elements, in an operation's copy) run by
// the algorithm the selector picks for it on `state`. An MPI error code.
int runNested(CommState& state, Call& call, const Algorithm** used = nullptr) {
  call.inOperation = true;
  if (used) *used = &pmpiAlgorithm(call.coll);
  if (std::optional<FallbackReason> reason = call.check(state.rank, state.size); reason)
    return pmpiInOperation(state, call);
  CallShape shape = call.shape();
  shape.coll = call.coll;
  shape.teamSize = state.size;
  shape.ordered = shape.ordered && runtime().config.deterministic;
  describeEngine(shape, *state.engine, true);
  // Not through the communicator's memo: an operation runs at a time of this rank's own, and the
  // memo's replacements must happen at the same calls on every rank.
  const Algorithm& algorithm = *selectFor(shape, {}).algorithm;
  std::optional<FallbackReason> reason;
  if (algorithm.isPmpi()) reason = FallbackReason::kSelected;
  const int rc = runHere(&state, call, &algorithm, &reason);
  if (used && !reason) *used = &algorithm;
  return rc;
}

// OVERPASS_FUSION: an allreduce operation at the head of its communicator's queue and the fusable
// ones right behind it run as one allreduce of their packed vectors. How many join is agreed
// first (the least any rank has queued: one small allreduce), since ranks see different queues;
// each then runs on its own contribution as it would alone, element by element, so that in
// deterministic mode the results are those of the separate calls, bit for bit. Returns the MPI
// error code and sets *used to the algorithm that served the group, or returns nothing where no
// rank has another to join (the head then runs alone).
std::optional<int> runFused(CommState& state, const Call& head,
                            const std::optional<FusionPart>& part, const Algorithm** used) {
  std::vector<FusionPart> group;  // the head's part, then those behind it that join
  if (part) {
    group = partsBehind(state, *part, runtime().config.fusion);
    group.insert(group.begin(), *part);
  }
  int mine = std::max(static_cast<int>(group.size()) - 1, 0), agreed = 0;
  Call agree =
      Call::reduction(Collective::kAllreduce, &mine, &agreed, 1, MPI_INT, MPI_MIN, 0, head.comm);
  if (const int rc = runNested(state, agree); rc != MPI_SUCCESS) return rc;
  if (agreed == 0) return std::nullopt;
  group.resize(static_cast<std::size_t>(agreed) + 1);
  std::size_t bytes = 0;
  for (const FusionPart& p : group) bytes += p.bytes;
  OVERPASS_TRACE("iallreduce: %d calls fused into one of %zu bytes", agreed + 1, bytes);
  auto* in = static_cast<char*>(state.engine->staging.get(StagingSlot::kFusionIn, bytes));
  auto* out = static_cast<char*>(state.engine->staging.get(StagingSlot::kFusionOut, bytes));
  std::size_t at = 0;
  for (const FusionPart& p : group) {
    std::memcpy(in + at, p.in, p.bytes);
    at += p.bytes;
  }
  Call fused = head;
  fused.sendbuf = in;
  fused.recvbuf = out;
  fused.recvcount = fused.sendcount = static_cast<int>(bytes / head.red.elementBytes);
  const int rc = runNested(state, fused, used);
  at = 0;
  for (const FusionPart& p : group) {
    std::memcpy(p.out, out + at, p.bytes);
    at += p.bytes;
  }
  absorb(state, group.size() - 1, rc);
  if (runtime().config.statsMode != StatsMode::kOff) {
    const StatsRow row(Collective::kAllreduce, true);
    for (std::size_t i = 0; i < group.size(); ++i) {
      runtime().stats.recordFused(row);
      if (i > 0) runtime().stats.record(row, group[i].bytes, algorithmId(**used), 0);  // absorbed
    }
  }
  return rc;
}

// Where a nonblocking allreduce may join a fused group: a predefined operation on this rank's
// host buffers (its elements are then contiguous); the key is its datatype and operation.
std::optional<FusionPart> fusionPart(const Call& call, const Memory& memory) {
  if (call.coll != Collective::kAllreduce || runtime().config.fusion == 0 || memory.any() ||
      call.red.op == ReduceOp::kUser || call.recvcount <= 0)
    return std::nullopt;
  FusionPart part;
  part.key =
      (static_cast<std::uint64_t>(call.red.type) << 8) | static_cast<std::uint64_t>(call.red.op);
  part.bytes = static_cast<std::size_t>(call.recvcount) * call.red.elementBytes;  // as stored
  part.in = call.input();
  part.out = call.recvbuf;
  return part;
}

// The derived datatypes of a nonblocking call, duplicated for the operation's lifetime: the
// program may free its own before the call completes (MPI 3.1, 4.1.9), and the operation packs
// and unpacks with them until then.
struct OwnedTypes {
  MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};

  static bool needed(const Call& call) { return derived(call.sendtype) || derived(call.recvtype); }

  // Replaces `call`'s derived datatypes by duplicates. An MPI error code.
  int keep(Call& call) {
    MPI_Datatype* sides[2] = {&call.sendtype, &call.recvtype};
    for (int i = 0; i < 2; ++i) {
      if (!derived(*sides[i])) continue;
      if (const int rc = PMPI_Type_dup(*sides[i], &types[i]); rc != MPI_SUCCESS) return rc;
      *sides[i] = types[i];
    }
    return MPI_SUCCESS;
  }
  ~OwnedTypes() {
    for (MPI_Datatype& t : types)
      if (t != MPI_DATATYPE_NULL) PMPI_Type_free(&t);
  }
};

// A nonblocking call that Overpass serves: `algorithm` (a host one) runs as an operation of the
// nonblocking engine (shim/nonblocking.h), on its own copy of the call and of its arrays of counts
// and displacements; its request is the operation's. A decline inside it goes to the MPI
// library's nonblocking collective on Overpass's communicator.
int startInOperation(CommState& state, const Call& call, const Algorithm& algorithm,
                     const Memory& memory, const CallShape& shape) {
  const bool timed = runtime().config.statsMode != StatsMode::kOff;
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  Call own = call;
  own.inOperation = true;
  std::shared_ptr<std::vector<int>> arrays;
  if (isVector(call.coll)) {
    arrays = std::make_shared<std::vector<int>>();
    own.keepArrays(arrays.get());
  }
  std::shared_ptr<OwnedTypes> types;
  if (OwnedTypes::needed(own)) {
    types = std::make_shared<OwnedTypes>();
    if (const int rc = types->keep(own); rc != MPI_SUCCESS) return raiseError(call.comm, rc);
  }
  // Host copies of this rank's device buffers: the operation's own (the communicator's serve
  // its blocking calls meanwhile).
  std::shared_ptr<HostStaging> host = memory.any() ? std::make_shared<HostStaging>() : nullptr;
  // Every rank of the communicator agrees on fusion at its allreduces alike (shared facts).
  const bool fuses = call.coll == Collective::kAllreduce && runtime().config.fusion > 0;
  const std::optional<FusionPart> part = fusionPart(call, memory);
  auto body = [&state, call = own, arrays, types, host, &algorithm, memory, shape, timed, start,
               fuses, part]() mutable {
    std::optional<FallbackReason> reason;
    const Algorithm* used = &algorithm;
    std::optional<int> rc;
    if (fuses) rc = runFused(state, call, part, &used);
    if (!rc)
      rc = host ? runStaged(&state, call, &algorithm, memory, *host, &reason)
                : runHere(&state, call, &algorithm, &reason);
    if (timed) record(call, &shape, used, reason, memory, start);
    return *rc;
  };
  const int rc = startOperation(state, call, std::move(body), part,
                                host ? deviceMemory()->context() : nullptr);
  return rc == MPI_SUCCESS ? rc : raiseError(call.comm, rc);
}

// The watchdog's (OVERPASS_TIMEOUT) name of this call: its communicator's key and its number on
// it.
void identify(WatchedCall& watch, CommState& state, MPI_Comm comm) {
  if (!watch.active() || state.inter) return;
  if (!state.boardKey) state.boardKey = boardKey(comm);
  watch.identify(state.boardKey, state.calls);
}

// Repeated calls. A program repeats its calls: the same collective on the same communicator with
// the same counts, datatypes, operation, root and use of MPI_IN_PLACE. All that dispatch derives
// from those (the checks, the translation of the reduction, the shape, the selection) is then
// what it derived the time before, so each thread remembers, per collective, its last blocking
// call with the decision taken, and a call that repeats it goes straight to that algorithm or to
// the MPI library: more than half of Overpass's own instructions in a small call
// (docs/PERFORMANCE.md, "Third campaign"). A vector collective repeats one with the same contents
// of the arrays of counts and displacements significant on this rank (kept in tRepeatArrays).
// Remembered only where nothing else took part in the decision: datatypes and operation
// predefined (a program's own may be freed, and the handle come back for another), the
// communicator's engine running, a host algorithm or the MPI library selected. Checked at each
// repeat: Overpass active and not reentered, the communicator's state the same (commStateEpoch),
// no nonblocking call of it outstanding (they drain first), no device buffer. Constant-initialised
// (null handles), so that a thread reaches it without a TLS wrapper.
struct Repeat {
  CommState* state = nullptr;  // null: nothing remembered
  std::uint64_t epoch = 0;
  MPI_Comm comm{};
  int rank = 0, size = 0;  // on comm
  MPI_Datatype sendtype{}, recvtype{};
  MPI_Op op{};
  int sendcount = 0, recvcount = 0, root = 0;
  bool sendInPlace = false, recvInPlace = false;
  const Algorithm* algorithm = nullptr;  // the MPI library's where the selection chose it
  Race* race = nullptr;                  // the race that chose it, if any (the engine's)
  // A vector collective's significant arrays, one after the other (this thread's tRepeatArrays),
  // and which they are: bit i for the i-th of sendcounts, sdispls, recvcounts, rdispls. Which are
  // significant follows from the collective, the rank, the root and MPI_IN_PLACE, all compared
  // before them, so a repeat has the same.
  const std::vector<int>* arrays = nullptr;
  unsigned significant = 0;
  CoreReading* cores = nullptr;  // the readings of a pair's cores (pairChannel), if any
  CallShape shape;               // for the statistics
  // check()'s translation of the reduction (never a program's own operation).
  DataType redType = DataType::kByte;
  ReduceOp redOp = ReduceOp::kSum;
  std::size_t redElementBytes = 0;

  // `c`, on comm, its rank and size set, repeats this call.
  bool repeatedBy(const Call& c) const {
    return sendcount == c.sendcount && recvcount == c.recvcount && root == c.root &&
           sendtype == c.sendtype && recvtype == c.recvtype && op == c.op &&
           sendInPlace == (c.sendbuf == MPI_IN_PLACE) &&
           recvInPlace == (c.recvbuf == MPI_IN_PLACE) && (!arrays || sameArrays(c));
  }
  bool sameArrays(const Call& c) const {
    const auto p = static_cast<std::size_t>(size);
    const int* const given[4] = {c.sendcounts, c.sdispls, c.recvcounts, c.rdispls};
    const int* kept = arrays->data();
    for (unsigned i = 0; i < 4; ++i) {
      if (!(significant & 1u << i)) continue;
      if (!given[i] || !sameInts(kept, given[i], p)) return false;  // null: the whole path's check
      kept += p;
    }
    return true;
  }
  // A loop where the arrays are short (a repeated vector call of a few ranks costs about 100
  // instructions less than through memcmp, docs/PERFORMANCE.md "The repeated vector call").
  static bool sameInts(const int* a, const int* b, std::size_t n) {
    if (n > 16) return std::memcmp(a, b, n * sizeof(int)) == 0;
    for (std::size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
};
__attribute__((tls_model("initial-exec"))) thread_local std::array<Repeat, kNumCollectives>
    tRepeats;
// The vector collectives' arrays of tRepeats, a thread's own, reached only where a call is
// remembered. At the thread's end (for the main thread: in exit(), before the atexit handlers,
// which may still make calls) they go, and with them every vector call remembered; none is
// remembered after (tRepeatArraysGone).
__attribute__((tls_model("initial-exec"))) thread_local bool tRepeatArraysGone = false;
struct RepeatArrays {
  std::array<std::vector<int>, kNumCollectives> kept;
  ~RepeatArrays() {
    for (Repeat& r : tRepeats)
      if (r.arrays) r = Repeat{};
    tRepeatArraysGone = true;
  }
};
thread_local RepeatArrays tRepeatArrays;

// Remembers `call`, decided as `algorithm` (the one selected) on `state`, where it may be.
void remember(const Call& call, CommState& state, const Algorithm& algorithm, Race* race,
              const CallShape& shape, const Memory& memory) {
  if (call.request || memory.any() ||
      (algorithm.kind != AlgorithmKind::kHost && !algorithm.isPmpi()) ||
      (isReduction(call.coll) && call.red.op == ReduceOp::kUser) || derived(call.sendtype) ||
      derived(call.recvtype))
    return;
  const auto c = static_cast<std::size_t>(call.coll);
  const std::vector<int>* arrays = nullptr;
  unsigned significant = 0;
  if (isVector(call.coll)) {
    if (tRepeatArraysGone) return;
    std::vector<int>& kept = tRepeatArrays.kept[c];
    kept.clear();
    const std::array<const int*, 4> given = call.significantArrays();
    for (unsigned i = 0; i < given.size(); ++i)
      if (given[i]) {
        kept.insert(kept.end(), given[i], given[i] + call.size);
        significant |= 1u << i;
      }
    arrays = &kept;
  }
  ShmChannel* pair = pairChannel(*state.engine);
  tRepeats[c] = {.state = &state,
                 .epoch = commStateEpoch(),
                 .comm = call.comm,
                 .rank = call.rank,
                 .size = call.size,
                 .sendtype = call.sendtype,
                 .recvtype = call.recvtype,
                 .op = call.op,
                 .sendcount = call.sendcount,
                 .recvcount = call.recvcount,
                 .root = call.root,
                 .sendInPlace = call.sendbuf == MPI_IN_PLACE,
                 .recvInPlace = call.recvbuf == MPI_IN_PLACE,
                 .algorithm = &algorithm,
                 .race = race,
                 .arrays = arrays,
                 .significant = significant,
                 .cores = pair ? &pair->cores() : nullptr,
                 .shape = shape,
                 .redType = call.red.type,
                 .redOp = call.red.op,
                 .redElementBytes = call.red.elementBytes};
}

// `call` run as the one it repeats was decided, or nothing where it repeats none.
std::optional<int> runRepeated(Call& call) {
  const Repeat& r = tRepeats[static_cast<std::size_t>(call.coll)];
  // The same communicator, not freed since (its handle may have come back for another), before
  // its rank and size are taken to read the call's arrays.
  if (call.request || !r.state || r.comm != call.comm || r.epoch != commStateEpoch())
    return std::nullopt;
  const Runtime& rt = runtime();
  call.rank = r.rank;  // as check() sets them
  call.size = r.size;
  if (!r.repeatedBy(call) || rt.phase.load(std::memory_order_acquire) != Phase::kActive ||
      ReentryGuard::active() || r.state->outstanding.load(std::memory_order_acquire) > 0)
    return std::nullopt;
  if (DeviceMemory* device = deviceMemory(); device && classify(call, *device).any())
    return std::nullopt;
  CommState& state = *r.state;
  // A race's trials and decision take the whole path; so does a call that reads the cores'
  // distance (paceCores), the others are counted.
  if (r.race && !r.race->settled()) return std::nullopt;
  if (r.cores) {
    if (r.cores->due(r.size)) return std::nullopt;
    ++r.cores->calls;
  }
  const bool timed = rt.config.statsMode != StatsMode::kOff;
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  WatchedCall watch(static_cast<int>(call.coll), call.comm);
  ++state.calls;
  identify(watch, state, call.comm);
  std::optional<FallbackReason> reason;
  if (r.algorithm->isPmpi()) {
    reason = FallbackReason::kSelected;
  } else {
    call.red.type = r.redType;
    call.red.op = r.redOp;
    call.red.elementBytes = r.redElementBytes;
  }
  const int rc = runHere(&state, call, r.algorithm, &reason);
  if (r.race) r.race->done(0);
  if (timed) record(call, &r.shape, r.algorithm, reason, Memory{}, start);
  return rc;
}

// The whole path, `reason` being globalFallback's: for a call that repeats none or may not take
// the short one (runRepeated). Out of line, so that a repeated call does not set up its frame.
__attribute__((noinline)) int dispatchUnguarded(Call& call, std::optional<FallbackReason> reason) {
  const Collective coll = call.coll;
  const MPI_Comm comm = call.comm;
  Runtime& rt = runtime();
  WatchedCall watch(static_cast<int>(coll), comm);  // OVERPASS_TIMEOUT, whichever path runs
  if (!reason && (comm == MPI_COMM_NULL || !call.valid()))
    reason = FallbackReason::kInvalidArgument;
  CommState* state = nullptr;
  if (!reason) {
    ReentryGuard guard;
    int rc = MPI_SUCCESS;
    state = commState(comm, &rc);  // the light record: no communication
    if (!state) return raiseError(comm, rc);
    ++state->calls;
    if (state->inter) reason = FallbackReason::kIntercommunicator;
    identify(watch, *state, comm);
  }
  if (!reason) reason = call.check(state->rank, state->size);
  const bool timed = rt.config.statsMode != StatsMode::kOff;
  int size = 0;
  if (state)
    size = state->size;
  else if (timed && reason != FallbackReason::kInvalidArgument)
    PMPI_Comm_size(comm, &size);
  const bool sized = (timed || !reason) && reason != FallbackReason::kInvalidArgument;
  CallShape shape;
  if (sized) shape = call.shape();
  shape.coll = coll;
  shape.teamSize = size;
  shape.ordered = shape.ordered && rt.config.deterministic;
  if (!reason && !state->engine) {
    // The set-up is collective and blocking: never at a nonblocking call, which must return at
    // once; the first blocking call after the warm-up does it.
    if (call.request) {
      reason = FallbackReason::kNotSetUp;
    } else if (!endsWarmUp(comm, *state, shape)) {
      reason = FallbackReason::kWarmingUp;
    } else {
      ReentryGuard guard;
      if (const int rc = startEngine(comm, *state); rc != MPI_SUCCESS) return raiseError(comm, rc);
    }
  }
  if (const CommEngine* engine = state ? state->engine.get() : nullptr)
    describeEngine(shape, *engine, call.request != nullptr);
  if (!reason && call.request && !nonblockingReady()) reason = FallbackReason::kNoProgressHook;
  if (!reason && call.request && call.red.op == ReduceOp::kUser)
    reason = FallbackReason::kNonblockingUserOp;
  // A blocking call of Overpass on the communicator: after its nonblocking ones (before its
  // selection, whose memo they may use no more), counted for the cores' readings (which the
  // selection may go by).
  if (!reason && !call.request) {
    if (state->outstanding.load(std::memory_order_acquire) > 0) drain(*state);
    if (const int rc = paceCores(*state, shape); rc != MPI_SUCCESS) return raiseError(comm, rc);
  }
  const Algorithm* algorithm = nullptr;
  Race* race = nullptr;
  bool afterDeclines = false;
  if (!reason) {
    const SelectionCache::Choice choice = selectAlgorithm(*state, shape);
    algorithm = choice.algorithm;
    afterDeclines = choice.afterDeclines;
    if (choice.rival && !call.request)
      race = state->engine->races.find(shape, *choice.algorithm, *choice.rival);
    if (race) {
      if (const int rc = paceRace(*state, *race, shape); rc != MPI_SUCCESS)
        return raiseError(comm, rc);
      algorithm = &race->runner();
    }
    if (algorithm->isPmpi()) reason = FallbackReason::kSelected;
  }
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  // This rank's buffers, classified once (a device backend is active only where a CUDA driver
  // or the simulated device was found).
  Memory memory;
  if (DeviceMemory* device = state && !state->inter && reason != FallbackReason::kInvalidArgument
                                 ? deviceMemory()
                                 : nullptr)
    memory = classify(call, *device);
  // Not a choice made after declines: its retry counts the calls through the memo, on every rank
  // alike, where one rank's device buffers (never remembered) would count and another's not.
  if (algorithm && !afterDeclines) remember(call, *state, *algorithm, race, shape, memory);
  if (call.request && !reason) return startInOperation(*state, call, *algorithm, memory, shape);
  if (call.request && memory.any() && nonblockingReady()) {
    if (timed) record(call, &shape, algorithm, reason, memory, start);
    return startStagedPmpi(*state, call, memory);
  }
  const bool trial = race && race->step() == Race::Step::kTrial;
  const auto raceStart =
      trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  int rc = MPI_SUCCESS;
  // The device algorithms and the pipeline run, or decline alike on every rank and are passed
  // over for this shape; at most two of them are tried (coll/select/registry.h), then a host
  // algorithm or the MPI library runs.
  while (!reason && algorithm->kind != AlgorithmKind::kHost) {
    const Status status = algorithm->kind == AlgorithmKind::kDevice
                              ? runDevice(*state, call, *algorithm, memory)
                              : runPipeline(*state, call, shape, memory, &rc);
    if (status != Status::kDeclined) {
      if (status != Status::kOk)
        rc = raiseError(comm, rc != MPI_SUCCESS ? rc : errorCode(*state, status));
      break;
    }
    OVERPASS_DEBUG(
        "%s of %zu bytes: %s declined (some rank's buffers cannot take part); passed "
        "over for this size for %u calls",
        collectiveName(coll).data(), shape.bytes, algorithm->name.data(),
        static_cast<unsigned>(SelectionCache::kRetryAfter));
    algorithm = state->engine->selections.decline(shape, *algorithm, selectFor).algorithm;
    if (algorithm->isPmpi()) reason = FallbackReason::kSelected;
  }
  if (reason || algorithm->kind == AlgorithmKind::kHost)
    rc = memory.any() ? runStaged(state, call, algorithm, memory, state->deviceStaging, &reason)
                      : runHere(state, call, algorithm, &reason);
  if (race)
    race->done(
        trial ? static_cast<std::uint64_t>(
                    std::chrono::nanoseconds(std::chrono::steady_clock::now() - raceStart).count())
              : 0);
  if (timed) record(call, sized ? &shape : nullptr, algorithm, reason, memory, start);
  return rc;
}

}  // namespace

int dispatch(Call& call) {
  try {
    if (const std::optional<int> rc = runRepeated(call)) return *rc;
    std::optional<FallbackReason> reason = globalFallback(call.coll);
    if (reason == FallbackReason::kNotInitialized || reason == FallbackReason::kReentry)
      return call.pmpi();  // nothing to record: statistics need a running Overpass
    // OVERPASS_DISABLE without statistics: the MPI library's call at once, the whole path would
    // only compute what nothing reads.
    if (reason == FallbackReason::kDisabled && runtime().config.statsMode == StatsMode::kOff)
      return runHere(nullptr, call, nullptr, &reason);
    return dispatchUnguarded(call, reason);
  } catch (const std::bad_alloc&) {
    OVERPASS_ERROR("%s: out of memory", collectiveName(call.coll).data());
    return raiseError(call.comm, MPI_ERR_NO_MEM);
  } catch (const std::exception& e) {
    OVERPASS_ERROR("%s: internal error: %s", collectiveName(call.coll).data(), e.what());
    return raiseError(call.comm, MPI_ERR_INTERN);
  }
}

}  // namespace overpass::shim
