// How the hierarchical reductions (allreduce, reduce) share a vector among nodes that may hold
// different numbers of ranks. The vector is cut into S slices, S = the most ranks on one node
// (BlockSplit(args, S)); on a node of L ranks, local rank l owns the slices
// [l S / L, (l + 1) S / L) (BlockSplit(args, L, S), block l): one slice each where L = S, several
// on smaller nodes, all S on a node of one rank. Slice s crosses nodes among its owners, one per
// node in node order (sliceOwners); where every node holds S ranks that is rail s.
//
// A rank that owns several slices takes part in their steps between nodes one after the other,
// in increasing slice order: the lowest unfinished slice always has all its owners at it, so the
// steps cannot deadlock, and two steps never overlap on one rank, so messages between the same
// two ranks match in order.
#pragma once

#include <vector>

#include "topo/topology.h"

namespace overpass {

// The local rank that owns slice `slice` of `slices` on a node of `nodeSize` ranks: the l with
// l S / L <= s < (l + 1) S / L.
inline int sliceOwner(int slice, int slices, int nodeSize) {
  return static_cast<int>((static_cast<long long>(slice + 1) * nodeSize - 1) / slices);
}

// The owners of slice `slice` of `slices` on every node, in node order.
inline std::vector<int> sliceOwners(const Topology& topo, int slice, int slices) {
  std::vector<int> owners;
  owners.reserve(topo.nodeCount());
  for (int n = 0; n < topo.nodeCount(); ++n)
    owners.push_back(topo.nodeRanks(n)[sliceOwner(slice, slices, topo.nodeSize(n))]);
  return owners;
}

}  // namespace overpass
