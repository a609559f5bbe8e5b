// Team: the ranks an algorithm runs among (a communicator, or later a sub-group of one), with
// the transport that connects them and persistent scratch memory reused from call to call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/slot_pool.h"
#include "gpu/memory.h"
#include "shm/channel.h"
#include "topo/topology.h"
#include "transport/transport.h"

namespace overpass {

class Selector;

// The slots of the algorithms' scratch memory, named by what they hold. Calls nest at most three
// levels deep: a hierarchical algorithm runs flat algorithms (and phases) on sub-groups, a flat
// algorithm runs phases, a phase runs nothing. Each level takes only its own slots, so a nested
// call cannot overwrite, by accident, a buffer that an enclosing call still holds; calls of one
// level that run one after the other may reuse the same slots.
enum class ScratchSlot : int {
  // ---- phases (coll/ring_reduce_scatter, rank_order_reduce_scatter, shm_reduce,
  // node_reduce_scatter, cma, coll/phases/): run inside flat and hierarchical algorithms ----
  kPhaseIncoming,  // ring reduce-scatter: the incoming block; shm reduce: the even partials;
                   // cma reduce: a bounce buffer
  kPhaseBlocks,    // rank-order reduce-scatter: every rank's copy of the own block; shm reduce:
                   // the odd partials; cma reduce: the other bounce buffer
  // ---- flat algorithms (those of the registry that run no sub-group), around their phases ----
  kIncoming,   // a received message before it is combined or unpacked: recursive doubling's and
               // Rabenseifner's partner vector, the binomial reduce's child partial, k-nomial's
               // first child, recursive halving's later halves, the ring reduce-scatter-block's
               // even partials, Bruck alltoall's incoming pack
  kIncoming2,  // k-nomial's second child; the ring reduce-scatter-block's odd partials; Bruck
               // alltoall's outgoing pack
  kIncoming3,  // k-nomial's third child
  kPartial,    // the rank's running result or its work copy of the vector: the binomial
               // reduce's partial, recursive halving's partial sums, reduce_scatter_gather's
               // vector off the root, the rank-order reduce's block off the root
  kBlocks,     // many ranks' blocks at once: rank_order_root's p vectors, the binomial gather's
               // and scatter's subtree blocks (gatherv's and scatterv's too, and their root's
               // packed runs), Bruck alltoall's rotated blocks
  kSizes,      // block sizes (uint64): the binomial gatherv's and scatterv's subtree headers
  // ---- hierarchical algorithms: held across the flat algorithms their steps run ----
  kNodeBlocks,  // gather, scatter, gatherv, scatterv: the node's blocks, on its rank on the
                // root's rail
  kWhole,       // gather, scatter: every block in node order, at the root; gatherv, scatterv:
                // the node buffers not in place in the root's buffer; reduce: the whole vector,
                // off the root
  kCount
};

// Persistent scratch buffers of a team (common/slot_pool.h: grown on demand and kept).
class Scratch {
 public:
  static constexpr int kSlots = static_cast<int>(ScratchSlot::kCount);
  void* get(ScratchSlot slot, std::size_t bytes) {
    return pool_.get(static_cast<std::size_t>(slot), bytes);
  }

 private:
  SlotPool<HeapMemory, kSlots> pool_;
};

struct Team {
  Transport& transport;
  Scratch& scratch;
  ShmChannel* shm = nullptr;           // the team's shared-memory channel, when it shares one node
  const Topology* topology = nullptr;  // which ranks share a node (hierarchical algorithms)
  ShmChannel* nodeShm = nullptr;       // among this rank's node, in local-rank order (null on a
                                       // node of one rank)
  // Results larger than this go around the cache when copied out of shared memory
  // (shm/stream_copy.h): this rank's share of its last-level cache.
  std::size_t streamAbove = SIZE_MAX;
  // Picks the algorithm of each step a hierarchical algorithm runs on a sub-group (selectStep in
  // coll/select/selector.h); null: the steps' fixed defaults.
  const Selector* selector = nullptr;
  // The device algorithms' (coll/device/device_ipc.h): this process's device backend and device
  // memory.
  DeviceMemory* device = nullptr;
  DeviceScratch* deviceScratch = nullptr;
  // Bytes of the buffers of every node's channel (nodes of 2+ ranks), known on every rank, also
  // on a node of one rank, which has no channel; 0: the nodes have none.
  std::size_t nodeShmBuffer = 0;
  int rank() const { return transport.rank(); }
  int size() const { return transport.size(); }
};

// Whether the team spans two or more nodes and some node holds two or more ranks: where the
// hierarchical algorithms run their steps (elsewhere they run a flat algorithm). The nodes may
// hold different numbers of ranks; a node of one rank has no node step.
inline bool overSeveralNodes(const Team& team) {
  const Topology* t = team.topology;
  return t && t->size() == team.size() && t->nodeCount() >= 2 && t->maxRanksPerNode() >= 2;
}

}  // namespace overpass
