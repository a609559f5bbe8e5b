// Collectives among the ranks of one node whose buffers all lie in device memory: each rank maps
// its peers' buffers through IPC (CUDA IPC, or the simulated device's; gpu/memory.h) and the data
// moves device to device, reductions on the device; nothing passes through host memory.
//
// Every rank of the node's channel calls deviceIpc for the same call, whatever its buffers, and
// the ranks first agree through the shared memory, never assuming:
//   round 1: each rank publishes whether it can take part (its buffers are device memory,
//            exportable where peers read them, the reduction has a device kernel) and the
//            handles of the buffers its peers read;
//   round 2: each rank maps the peers' buffers it reads and publishes whether it could.
// Where any rank cannot, no rank takes the path (Status::kDeclined, nothing done) and the call goes
// on through host memory (staging); the channel is left ready for that. Then, per collective:
//   allreduce  rank r combines slice r of all p send buffers in rank order on the device, into
//              slice r of its receive buffer (through device scratch where that slice is its own
//              input, in place, and read after the first step); a round; each rank copies every
//              other slice from its owner's receive buffer.
//   bcast      every rank copies the root's buffer.
//   alltoall   rank r copies block r of every send buffer into block q of its receive buffer.
// A last round: no rank returns while a peer may still read its buffers.
// Cost: 3-4 rounds (flag writes and reads in host shared memory) + p - 1 kernels per rank on
// n/p elements + copies of (p - 1)/p n (allreduce), n (bcast), or (p - 1)/p of the buffer
// (alltoall), device to device at device (or NVLink) bandwidth.
// Results combine in rank order: the bits of every rank-order algorithm (deterministic mode).
#pragma once

#include "coll/coll_args.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// The registry's "device_ipc" algorithm of allreduce, bcast and alltoall, for a team on one node
// (team.shm); team.device is this process's device backend (null: none), team.deviceScratch its
// device memory. `args` without buffers: this rank cannot take part (its buffers need staging for
// reasons the shim knows, e.g. a datatype with holes).
Status deviceIpc(const CollArgs& args, Team& team);

}  // namespace overpass
