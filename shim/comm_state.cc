#include "shim/comm_state.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "gpu/memory.h"
#include "shim/nonblocking.h"
#include "shim/runtime.h"
#include "shim/world_ranks.h"
#include "transport/split_transport.h"
#include "transport/ucx/ucx_transport.h"

namespace overpass::shim {
namespace {

std::mutex gMutex;

std::vector<CommState*> gLive;  // states whose MPI resources are not yet freed

std::set<std::uint32_t> gUcxIds;  // UCX communicator ids in use in this process

// Shared-memory arenas mapped by this process (engines in use and pooled). A large limit, so that
// a runaway application cannot fill /dev/shm; reaching it is logged once (warn).
int gArenas = 0;
constexpr int kMaxArenas = 1024;
bool gArenaWarned = false;
unsigned gArenaCounter = 0;
std::uint32_t gNextUcxId = 1;

// The engine pools: per member list, kSlots slots. A slot is filled only by a set-up in which
// every member agreed that it was empty on all of them, so slot s holds the same engine on every
// member that holds one; a member may have emptied it since (eviction), or still use it.
constexpr int kSlots = 64;
// Free engines kept per process, over all pools; beyond, the least recently freed is destroyed.
constexpr int kMaxPooledFree = 16;

enum class SlotState : std::uint8_t { kEmpty, kFree, kInUse, kReserved };
struct Slot {
  SlotState state = SlotState::kEmpty;
  SlotState before = SlotState::kEmpty;  // while kReserved: what it was
  std::unique_ptr<CommEngine> engine;    // while kFree (and kReserved from kFree)
  std::uint64_t freedAt = 0;             // for eviction
};
using Pool = std::array<Slot, kSlots>;
std::map<std::vector<int>, Pool> gPools;
int gPooledFree = 0;
std::uint64_t gReleaseClock = 0;

void destroyEngine(std::unique_ptr<CommEngine> engine) {
  if (!engine) return;
  engine->transport.reset();
  engine->shm.reset();
  if (engine->arena) --gArenas;
  engine->arena.reset();
  gUcxIds.erase(engine->ucxCommId);
  if (engine->dup != MPI_COMM_NULL) PMPI_Comm_free(&engine->dup);
}

// Forgets the pool of `key` if all its slots are empty (no set-up holds a reservation in it).
void erasePoolIfEmpty(const std::vector<int>& key) {
  const auto it = gPools.find(key);
  if (it == gPools.end()) return;
  for (const Slot& s : it->second)
    if (s.state != SlotState::kEmpty) return;
  gPools.erase(it);
}

// Destroys the least recently freed pooled engine while more than kMaxPooledFree are kept.
void evictLocked() {
  while (gPooledFree > kMaxPooledFree) {
    Slot* oldest = nullptr;
    const std::vector<int>* key = nullptr;
    for (auto& [members, pool] : gPools)
      for (Slot& s : pool)
        if (s.state == SlotState::kFree && (!oldest || s.freedAt < oldest->freedAt)) {
          oldest = &s;
          key = &members;
        }
    if (!oldest) return;
    destroyEngine(std::move(oldest->engine));
    oldest->state = SlotState::kEmpty;
    --gPooledFree;
    erasePoolIfEmpty(std::vector<int>(*key));
  }
}

void releaseLocked(CommState* state) {
  if (state->released) return;
  state->released = true;
  gLive.erase(std::remove(gLive.begin(), gLive.end(), state), gLive.end());
  if (!state->engine) return;
  if (state->slot < 0) {
    destroyEngine(std::move(state->engine));
    return;
  }
  Slot& slot = gPools[state->engine->members][state->slot];
  slot.engine = std::move(state->engine);
  slot.state = SlotState::kFree;
  slot.freedAt = ++gReleaseClock;
  ++gPooledFree;
  evictLocked();
}

// The last communicator each thread looked up and its state, valid while no state has been
// deleted since (a freed communicator's handle may come back for a new one): the attribute
// lookup costs about a quarter of Overpass's own instructions in a small call. The epoch
// (commStateEpoch) grows at every deletion, and where a state's decisions change.
std::atomic<std::uint64_t> gEpoch{0};
struct LastLookup {
  MPI_Comm comm{};  // (no handle: constant-initialised, no TLS wrapper at each access)
  CommState* state = nullptr;
  std::uint64_t epoch = 0;
};
__attribute__((tls_model("initial-exec"))) thread_local LastLookup tLast;

int deleteState(MPI_Comm, int, void* attribute, void*) {
  gEpoch.fetch_add(1, std::memory_order_acq_rel);
  auto* state = static_cast<CommState*>(attribute);
  drain(*state);  // MPI_Comm_free lets pending operations complete; they need the engine
  {
    std::lock_guard lock(gMutex);
    releaseLocked(state);
  }
  delete state;
  return MPI_SUCCESS;
}

// Agrees with the other ranks of `dup` on an id that no other live communicator of any of them
// uses, so that UCX tags of different communicators never match (also when threads create
// communicators concurrently): each rank proposes its next free id, all take the largest, and
// retry above it if the id is taken on some rank.
std::uint32_t agreeUcxCommId(MPI_Comm dup) {
  std::uint32_t proposal;
  {
    std::lock_guard lock(gMutex);
    proposal = gNextUcxId++;
  }
  for (;;) {
    std::uint32_t id = 0;
    PMPI_Allreduce(&proposal, &id, 1, MPI_UINT32_T, MPI_MAX, dup);
    int taken = 0, anyTaken = 0;
    {
      std::lock_guard lock(gMutex);
      taken = !gUcxIds.insert(id).second;
      gNextUcxId = std::max(gNextUcxId, id + 1);
    }
    PMPI_Allreduce(&taken, &anyTaken, 1, MPI_INT, MPI_LOR, dup);
    if (!anyTaken) return id;
    std::lock_guard lock(gMutex);
    if (!taken) gUcxIds.erase(id);
    proposal = gNextUcxId++;
  }
}

// Why a communicator goes without shared memory: at warn level the first time in this process,
// then at debug.
void reportNoShm(const std::string& why) {
  bool first = false;
  {
    std::lock_guard lock(gMutex);
    first = !gArenaWarned;
    gArenaWarned = true;
  }
  if (first)
    OVERPASS_WARN(
        "a communicator goes without node shared memory (%s): it uses point-to-point "
        "algorithms; further cases are logged at debug",
        why.c_str());
  else
    OVERPASS_DEBUG("no shared memory for this communicator: %s", why.c_str());
}

// The node's shared-memory channel: one segment per node of the communicator that holds 2 ranks
// or more, sized for that node's ranks and used among them in local-rank order (nodes may hold
// different numbers of ranks; a node of one rank has no channel and no node step). The
// node's local rank 0 creates the segment under a name unique to this job, the others attach,
// every rank of the communicator reports success, and the creators unlink the names at once
// (nothing is left in /dev/shm however the job ends). Any failure anywhere leaves every rank
// without the channel.
void setUpShm(CommEngine& engine, int rank, int size, int worldRank) {
  const std::size_t buffer = runtime().config.shmBuffer;
  const Topology& topo = engine.topology;
  if (buffer == 0 || size < 2 || topo.maxRanksPerNode() < 2) return;
  const int local = topo.localRank(rank), nodeSize = topo.nodeSize(topo.nodeOf(rank));
  MPI_Comm node = engine.dup;
  if (!topo.singleNode()) PMPI_Comm_split(engine.dup, topo.nodeOf(rank), local, &node);
  char name[96] = "";  // empty: the leader could not create the segment
  std::string why;
  const std::string kLimit =
      "this process maps " + std::to_string(kMaxArenas) + " segments, the most it may";
  if (local == 0 && nodeSize >= 2) {
    std::lock_guard lock(gMutex);
    if (gArenas < kMaxArenas) {
      std::random_device random;
      std::snprintf(name, sizeof name, "/overpass-%ld-%u-%08x", static_cast<long>(getpid()),
                    gArenaCounter++, random());
      engine.arena = ShmArena::create(name, nodeSize, buffer, &why);
      if (engine.arena)
        ++gArenas;
      else
        name[0] = '\0';
    } else {
      why = kLimit;
    }
  }
  PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, node);
  const bool created = name[0] != '\0';
  if (local != 0 && created) {
    std::lock_guard lock(gMutex);
    if (gArenas < kMaxArenas) {
      engine.arena = ShmArena::attach(name, &why);
      if (engine.arena && engine.arena->ranks() != nodeSize) {
        why = "the segment was made for another communicator";
        engine.arena.reset();
      }
      gArenas += engine.arena != nullptr;
    } else {
      why = kLimit;
    }
  }
  if (node != engine.dup) PMPI_Comm_free(&node);
  int mine = nodeSize < 2 || engine.arena != nullptr, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, engine.dup);
  if (local == 0 && created) ShmArena::unlink(name);
  if (!all) {
    if (!why.empty()) reportNoShm(why);
    std::lock_guard lock(gMutex);
    gArenas -= engine.arena != nullptr;
    engine.arena.reset();
    return;
  }
  engine.nodeShmBuffer = buffer;  // every node of 2+ ranks has a channel of this size
  if (!engine.arena) return;      // a node of one rank
  const bool crowded = runtime().job.oversubscribed(worldRank);
  engine.shm =
      std::make_unique<ShmChannel>(*engine.arena, local, static_cast<long>(getpid()), crowded);
  if (const std::size_t l3 = runtime().job.ranks[worldRank].l3Bytes)
    engine.streamAbove = l3 / nodeSize;
}

// OVERPASS_TRANSPORT=auto across hosts: inter-host messages below this size go over UCX, the rest
// over PMPI (docs/PERFORMANCE.md, "Transport decision": UCX 1.2-1.4x on small, latency-bound
// calls, up to 2.7x at 1-64 KiB unshaped; ob1's TCP path ahead on large ones).
constexpr std::size_t kAutoUcxBelow = std::size_t{64} << 10;

// The team ranks of `world` (world ranks) on other hosts than `rank`.
std::vector<bool> otherHosts(const std::vector<int>& world, int rank) {
  const JobTopology& job = runtime().job;
  const std::string& mine = job.ranks[world[rank]].hostname;
  std::vector<bool> far(world.size());
  for (std::size_t i = 0; i < world.size(); ++i) far[i] = job.ranks[world[i]].hostname != mine;
  return far;
}

// The engine's transport (OVERPASS_TRANSPORT): PMPI; UCX; or, with auto on a communicator across
// hosts, UCX for the small messages between hosts and PMPI for the rest. Collective over `comm`
// where UCX serves (the communicator id is agreed).
std::unique_ptr<Transport> makeTransport(MPI_Comm comm, CommEngine& engine,
                                         const std::vector<int>& world, int rank) {
  Runtime& rt = runtime();
  std::vector<bool> far = otherHosts(world, rank);
  const bool acrossHosts = std::find(far.begin(), far.end(), true) != far.end();
  const bool split = rt.config.transport == TransportKind::kAuto;
  const bool crowded = rt.job.oversubscribed(world[rank]);
  if (!rt.ucx || (split && !acrossHosts))
    return std::make_unique<PmpiTransport>(engine.dup, crowded);
  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  PMPI_Comm_get_name(comm, name, &len);
  engine.ucxCommId = agreeUcxCommId(engine.dup);
  auto ucx = std::make_unique<UcxTransport>(*rt.ucx, world, rank, engine.ucxCommId,
                                            len ? name : "unnamed");
  if (!split) return ucx;
  return std::make_unique<SplitTransport>(std::make_unique<PmpiTransport>(engine.dup, crowded),
                                          std::move(ucx), std::move(far), kAutoUcxBelow, crowded);
}

// Which transport serves each level of the communicator, for the info log.
std::string describeTransport(const CommEngine& state, const std::vector<int>& world, int rank) {
  Runtime& rt = runtime();
  constexpr const char* kPmpi = "pmpi (MPI point-to-point on a private communicator)";
  if (!rt.ucx) return std::string("transport ") + kPmpi;
  auto* split = dynamic_cast<const SplitTransport*>(state.transport.get());
  if (!split && dynamic_cast<const PmpiTransport*>(state.transport.get()))
    return std::string("transport ") + kPmpi;
  const Topology& t = state.topology;
  std::string out = split ? std::string("transport ") + kPmpi + "; between hosts below " +
                                std::to_string(split->farBelow() >> 10) + " KiB: ucx"
                          : "transport ucx";
  for (int peer = 0; peer < t.size(); ++peer) {  // one peer on this node, one on another
    if (peer == rank) continue;
    const bool same = t.nodeOf(peer) == t.nodeOf(rank);
    if (split && same) continue;
    if (out.find(same ? "within" : "across") != std::string::npos) continue;
    out += std::string(same ? "; within the node: " : "; across nodes: ") +
           rt.ucx->describePath(world[peer]);
  }
  return out;
}

// A new engine for the communicator of `state` over `comm`: private duplicate, topology, transport,
// shared memory. Collective over `comm`.
int buildEngine(MPI_Comm comm, const CommState& state, std::vector<int> world, bool deviceCapable,
                std::unique_ptr<CommEngine>* out) {
  auto engine = std::make_unique<CommEngine>();
  if (const int rc = PMPI_Comm_dup(comm, &engine->dup); rc != MPI_SUCCESS) return rc;
  PMPI_Comm_set_errhandler(engine->dup, MPI_ERRORS_RETURN);
  engine->topology = runtime().job.topologyOf(world);
  engine->selector = &runtime().selector;
  engine->deviceCapable = deviceCapable;
  engine->transport = makeTransport(comm, *engine, world, state.rank);
  setUpShm(*engine, state.rank, state.size, world[state.rank]);
  if (logEnabled(LogLevel::kInfo))
    OVERPASS_INFO("communicator of %d ranks: %s%s", state.size,
                  describeTransport(*engine, world, state.rank).c_str(),
                  engine->shm ? "; node shared memory" : "");
  engine->members = std::move(world);
  *out = std::move(engine);
  return MPI_SUCCESS;
}

}  // namespace

int initCommStates() {
  return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteState, &runtime().commKeyval,
                                 nullptr);
}

void releaseCommStates() {
  gEpoch.fetch_add(1, std::memory_order_acq_rel);
  std::lock_guard lock(gMutex);
  while (!gLive.empty()) {
    CommState* state = gLive.back();
    state->released = true;
    gLive.pop_back();
    destroyEngine(std::move(state->engine));
  }
  for (auto& [key, pool] : gPools)
    for (Slot& s : pool) destroyEngine(std::move(s.engine));
  gPools.clear();
  gPooledFree = 0;
}

std::uint64_t commStateEpoch() {
  return gEpoch.load(std::memory_order_acquire);
}

void commStateChanged() {
  gEpoch.fetch_add(1, std::memory_order_acq_rel);
}

CommState* commState(MPI_Comm comm, int* error) {
  const std::uint64_t epoch = commStateEpoch();
  if (tLast.comm == comm && tLast.epoch == epoch) {
    *error = MPI_SUCCESS;
    return tLast.state;
  }
  void* attribute = nullptr;
  int found = 0;
  *error = PMPI_Comm_get_attr(comm, runtime().commKeyval, &attribute, &found);
  if (*error != MPI_SUCCESS) return nullptr;
  if (found) {
    tLast = {comm, static_cast<CommState*>(attribute), epoch};
    return tLast.state;
  }

  auto state = std::make_unique<CommState>();
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  state->inter = inter != 0;
  PMPI_Comm_rank(comm, &state->rank);
  PMPI_Comm_size(comm, &state->size);
  *error = PMPI_Comm_set_attr(comm, runtime().commKeyval, state.get());
  if (*error != MPI_SUCCESS) return nullptr;
  if (!state->inter) {
    std::lock_guard lock(gMutex);
    gLive.push_back(state.get());
  }
  if (logEnabled(LogLevel::kInfo)) {
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(comm, name, &len);
    const unsigned warmUp = runtime().config.commWarmUp;
    if (state->inter)
      OVERPASS_INFO("communicator '%s' (inter, %d ranks): not handled", len ? name : "unnamed",
                    state->size);
    else if (comm != MPI_COMM_WORLD && warmUp > 0)
      OVERPASS_INFO(
          "communicator '%s' (intra, %d ranks): its first %u calls go to the MPI "
          "library (warm-up)",
          len ? name : "unnamed", state->size, warmUp);
  }
  return state.release();
}

bool endsWarmUp(MPI_Comm comm, const CommState& state, const CallShape& shape) {
  return warmUpEnds(comm == MPI_COMM_WORLD, runtime().config.commWarmUp, state.calls, shape);
}

SlotChoice chooseSlot(std::uint64_t freeAll, std::uint64_t emptyAll, std::uint64_t idleAll) {
  SlotChoice c;
  if (freeAll) {
    c.slot = std::countr_zero(freeAll);
    c.reuse = true;
  } else if (emptyAll) {
    c.slot = std::countr_zero(emptyAll);
  }
  c.stale = idleAll & ~freeAll & ~emptyAll;
  return c;
}

int startEngine(MPI_Comm comm, CommState& state) {
  std::vector<int> world = worldRanks(comm);
  // Reserve every free and every empty slot of the pool for this set-up (a concurrent set-up in
  // another thread sees them taken), then agree with one allreduce: bits of the slots free on
  // every rank, empty on every rank, and idle (free or empty) on every rank; and whether no rank
  // can hold device buffers.
  enum { kFreeBits, kEmptyBits, kIdleBits, kNoDevice, kWords };
  std::uint64_t mine[kWords] = {0, 0, 0, deviceMemoryPossible() ? 0 : ~std::uint64_t{0}};
  std::uint64_t all[kWords] = {};
  Pool* pool = nullptr;
  {
    std::lock_guard lock(gMutex);
    pool = &gPools[world];  // std::map: the address stays valid
    for (int i = 0; i < kSlots; ++i) {
      Slot& s = (*pool)[i];
      if (s.state != SlotState::kFree && s.state != SlotState::kEmpty) continue;
      const std::uint64_t bit = std::uint64_t{1} << i;
      mine[s.state == SlotState::kFree ? kFreeBits : kEmptyBits] |= bit;
      mine[kIdleBits] |= bit;
      s.before = s.state;
      s.state = SlotState::kReserved;
    }
  }
  const int rc = PMPI_Allreduce(mine, all, kWords, MPI_UINT64_T, MPI_BAND, comm);
  const SlotChoice choice = rc == MPI_SUCCESS
                                ? chooseSlot(all[kFreeBits], all[kEmptyBits], all[kIdleBits])
                                : SlotChoice{};
  const int chosen = choice.slot;
  {
    std::lock_guard lock(gMutex);
    for (int i = 0; i < kSlots; ++i) {
      Slot& s = (*pool)[i];
      if (!(mine[kIdleBits] >> i & 1)) continue;
      if (i == chosen) {
        if (s.before == SlotState::kFree) {
          state.engine = std::move(s.engine);
          --gPooledFree;
        }
        s.state = SlotState::kInUse;
      } else if (choice.stale >> i & 1 && s.before == SlotState::kFree) {
        destroyEngine(std::move(s.engine));
        --gPooledFree;
        s.state = SlotState::kEmpty;
      } else {
        s.state = s.before;
      }
    }
  }
  if (rc != MPI_SUCCESS || chosen < 0) {
    std::lock_guard lock(gMutex);
    erasePoolIfEmpty(world);
  }
  if (rc != MPI_SUCCESS) return rc;
  state.slot = chosen;
  if (state.engine) {
    if (logEnabled(LogLevel::kInfo))
      OVERPASS_INFO("communicator of %d ranks: set up from the engine in pool slot %d%s",
                    state.size, chosen, state.engine->shm ? "; node shared memory" : "");
    return MPI_SUCCESS;
  }
  const int built = buildEngine(comm, state, std::move(world), all[kNoDevice] == 0, &state.engine);
  if (built != MPI_SUCCESS && chosen >= 0) {
    std::lock_guard lock(gMutex);
    (*pool)[chosen].state = SlotState::kEmpty;
    state.slot = -1;
    erasePoolIfEmpty(state.engine ? state.engine->members : worldRanks(comm));
  }
  return built;
}

}  // namespace overpass::shim
