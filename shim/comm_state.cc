#include "shim/comm_state.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "common/log.h"
#include "shim/runtime.h"

namespace overpass::shim {
namespace {

std::mutex gMutex;

// The world ranks of `comm`'s ranks, in `comm`'s order (a local operation).
std::vector<int> worldRanks(MPI_Comm comm) {
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(size), out(size);
  for (int i = 0; i < size; ++i) ranks[i] = i;
  PMPI_Group_translate_ranks(group, size, ranks.data(), world, out.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return out;
}
std::vector<CommState*> gLive;  // states whose MPI resources are not yet freed

void releaseLocked(CommState* state) {
  if (state->released) return;
  state->released = true;
  state->transport.reset();
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
    state->transport = std::make_unique<PmpiTransport>(state->dup);
    state->topology = runtime().job.topologyOf(worldRanks(comm));
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
