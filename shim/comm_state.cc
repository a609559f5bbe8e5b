#include "shim/comm_state.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "gpu/memory.h"
#include "shim/runtime.h"
#include "shim/world_ranks.h"
#include "ucx_transport/ucx_transport.h"

namespace overpass::shim {
namespace {

std::mutex gMutex;

std::vector<CommState*> gLive;  // states whose MPI resources are not yet freed

std::set<std::uint32_t> gUcxIds;  // UCX communicator ids in use in this process

// Shared-memory arenas mapped by this process; beyond the limit, communicators go without (an
// application with thousands of communicators must not fill /dev/shm).
int gArenas = 0;
constexpr int kMaxArenas = 64;
unsigned gArenaCounter = 0;
std::uint32_t gNextUcxId = 1;

void releaseLocked(CommState* state) {
  if (state->released) return;
  state->released = true;
  state->transport.reset();
  state->shm.reset();
  if (state->arena) --gArenas;
  state->arena.reset();
  gUcxIds.erase(state->ucxCommId);
  if (state->dup != MPI_COMM_NULL) PMPI_Comm_free(&state->dup);
  gLive.erase(std::remove(gLive.begin(), gLive.end(), state), gLive.end());
}

int deleteState(MPI_Comm, int, void* attribute, void*) {
  auto* state = static_cast<CommState*>(attribute);
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

// The node's shared-memory channel: one segment per node of the communicator (when every node
// holds the same number of ranks, at least 2), among the node's ranks in local-rank order. The
// node's local rank 0 creates the segment under a name unique to this job, the others attach,
// every rank of the communicator reports success, and the creators unlink the names at once
// (nothing is left in /dev/shm however the job ends). Any failure anywhere leaves every rank
// without the channel.
void setUpShm(CommState& state, int rank, int size, int worldRank) {
  const std::size_t buffer = runtime().config.shmBuffer;
  const Topology& topo = state.topology;
  if (buffer == 0 || size < 2 || !topo.balanced() || topo.maxRanksPerNode() < 2) return;
  const int local = topo.localRank(rank), perNode = topo.maxRanksPerNode();
  MPI_Comm node = state.dup;
  if (!topo.singleNode()) PMPI_Comm_split(state.dup, topo.nodeOf(rank), local, &node);
  char name[96] = "";
  std::string why;
  int created = 0;
  if (local == 0) {
    std::lock_guard lock(gMutex);
    if (gArenas < kMaxArenas) {
      std::random_device random;
      std::snprintf(name, sizeof name, "/overpass-%ld-%u-%08x", static_cast<long>(getpid()),
                    gArenaCounter++, random());
      state.arena = ShmArena::create(name, perNode, buffer, &why);
      created = state.arena != nullptr;
      gArenas += created;
    } else {
      why = "too many communicators with shared memory in this process";
    }
  }
  PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, node);
  PMPI_Bcast(&created, 1, MPI_INT, 0, node);
  if (local != 0 && created) {
    std::lock_guard lock(gMutex);
    if (gArenas < kMaxArenas) {
      state.arena = ShmArena::attach(name, &why);
      if (state.arena && state.arena->ranks() != perNode) {
        why = "the segment was made for another communicator";
        state.arena.reset();
      }
      gArenas += state.arena != nullptr;
    } else {
      why = "too many communicators with shared memory in this process";
    }
  }
  if (node != state.dup) PMPI_Comm_free(&node);
  int mine = state.arena != nullptr, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, state.dup);
  if (local == 0 && created) ShmArena::unlink(name);
  if (!all) {
    if (!why.empty()) OVERPASS_DEBUG("no shared memory for this communicator: %s", why.c_str());
    std::lock_guard lock(gMutex);
    gArenas -= state.arena != nullptr;
    state.arena.reset();
    return;
  }
  const bool crowded = runtime().job.oversubscribed(worldRank);
  state.shm = std::make_unique<ShmChannel>(
      *state.arena, local, static_cast<long>(getpid()),
      crowded ? ShmChannel::kSpinsOversubscribed : ShmChannel::kSpins);
  if (const std::size_t l3 = runtime().job.ranks[worldRank].l3Bytes)
    state.streamAbove = l3 / perNode;
}

// Which transport serves each level of the communicator, for the info log.
std::string describeTransport(const CommState& state, const std::vector<int>& world, int rank) {
  Runtime& rt = runtime();
  if (!rt.ucx) return "transport pmpi (MPI point-to-point on a private communicator)";
  const Topology& t = state.topology;
  std::string out = "transport ucx";
  for (int peer = 0; peer < t.size(); ++peer) {  // one peer on this node, one on another
    if (peer == rank) continue;
    const bool same = t.nodeOf(peer) == t.nodeOf(rank);
    if (out.find(same ? "within" : "across") != std::string::npos) continue;
    out += std::string(same ? "; within the node: " : "; across nodes: ") +
           rt.ucx->describePath(world[peer]);
  }
  return out;
}

}  // namespace

int initCommStates() {
  return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteState, &runtime().commKeyval,
                                 nullptr);
}

void releaseCommStates() {
  std::lock_guard lock(gMutex);
  while (!gLive.empty()) releaseLocked(gLive.back());
}

CommState* commState(MPI_Comm comm, int* error) {
  void* attribute = nullptr;
  int found = 0;
  *error = PMPI_Comm_get_attr(comm, runtime().commKeyval, &attribute, &found);
  if (*error != MPI_SUCCESS) return nullptr;
  if (found) return static_cast<CommState*>(attribute);

  auto state = std::make_unique<CommState>();
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  state->inter = inter != 0;
  if (!state->inter) {
    *error = PMPI_Comm_dup(comm, &state->dup);
    if (*error != MPI_SUCCESS) return nullptr;
    PMPI_Comm_set_errhandler(state->dup, MPI_ERRORS_RETURN);
    const std::vector<int> world = worldRanks(comm);
    state->topology = runtime().job.topologyOf(world);
    state->selector = &runtime().selector;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (runtime().ucx) {
      char name[MPI_MAX_OBJECT_NAME] = "";
      int len = 0;
      PMPI_Comm_get_name(comm, name, &len);
      state->ucxCommId = agreeUcxCommId(state->dup);
      state->transport = std::make_unique<UcxTransport>(*runtime().ucx, world, rank,
                                                        state->ucxCommId, len ? name : "unnamed");
    } else {
      state->transport = std::make_unique<PmpiTransport>(state->dup);
    }
    setUpShm(*state, rank, static_cast<int>(world.size()), world[rank]);
    // Whether any rank can hold device buffers decides, identically everywhere, whether large
    // reductions run through the staging pipeline (docs/GPU.md).
    int possible = deviceMemoryPossible(), anywhere = 0;
    PMPI_Allreduce(&possible, &anywhere, 1, MPI_INT, MPI_MAX, state->dup);
    state->deviceCapable = anywhere != 0;
    if (logEnabled(LogLevel::kInfo))
      OVERPASS_INFO("communicator of %zu ranks: %s%s", world.size(),
                    describeTransport(*state, world, rank).c_str(),
                    state->shm ? "; node shared memory" : "");
  }
  *error = PMPI_Comm_set_attr(comm, runtime().commKeyval, state.get());
  if (*error != MPI_SUCCESS) {
    if (state->dup != MPI_COMM_NULL) PMPI_Comm_free(&state->dup);
    return nullptr;
  }
  if (!state->inter) {
    std::lock_guard lock(gMutex);
    gLive.push_back(state.get());
  }
  if (logEnabled(LogLevel::kInfo)) {
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(comm, name, &len);
    OVERPASS_INFO("communicator '%s' (%s, %d ranks): %s", len ? name : "unnamed",
                  state->inter ? "inter" : "intra", state->transport ? state->transport->size() : 0,
                  state->inter ? "not handled" : state->topology.summary().c_str());
  }
  return state.release();
}

}  // namespace overpass::shim
