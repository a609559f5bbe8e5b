// Team: the ranks an algorithm runs among (a communicator, or later a sub-group of one), with
// the transport that connects them and persistent scratch memory reused from call to call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/memory.h"
#include "shm/channel.h"
#include "topo/topology.h"
#include "transport/transport.h"

namespace overpass {

class Selector;

// Persistent scratch buffers, grown on demand and kept: per-call malloc/free of large buffers
// costs page faults on every call.
class Scratch {
 public:
  static constexpr int kSlots = 4;
  void* get(int slot, std::size_t bytes) {
    Buffer& b = buffers_[slot];
    if (b.size < bytes) {
      b.data.reset(new unsigned char[bytes]);
      b.size = bytes;
    }
    return b.data.get();
  }

 private:
  struct Buffer {
    std::unique_ptr<unsigned char[]> data;
    std::size_t size = 0;
  };
  Buffer buffers_[kSlots];
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
  // The device algorithms' (coll/device/device_ipc.h): this process's device backend and device memory.
  DeviceMemory* device = nullptr;
  DeviceScratch* deviceScratch = nullptr;
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
