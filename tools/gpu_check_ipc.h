// overpass-gpu-check's second part (tools/gpu_check_ipc.cc): the device collectives through IPC
// across processes of one node, without MPI.
#pragma once

#include <cstddef>
#include <string>

namespace overpass::gpucheck {

// The parent: starts `ranks` copies of `self` as ranks and waits for them; non-zero on failure.
int runIpc(const char* self, int ranks, bool simulated, std::size_t maxBytes);
// One rank (a child started by runIpc).
int ipcRank(int rank, int ranks, const std::string& arenaName, bool simulated,
            std::size_t maxBytes);

}  // namespace overpass::gpucheck
