// Reduce_scatter over several nodes as the hierarchical allreduce of the whole vector
// (coll/allreduce/hierarchical.cc: node steps in shared memory, one crossing between nodes),
// each rank keeping its block: for small vectors, where the flat algorithms' crossings cost more
// than moving p times the bytes (across hosts, 2 x 2 over 1 Gbit/s: the ring crosses three times,
// 0.27-0.49x Open MPI up to 1 KiB blocks; docs/PERFORMANCE.md).
// Cost: the hierarchical allreduce of N bytes, then a copy of the rank's block.
// Preconditions: N >= 2 nodes and some node of 2 or more ranks (as the hierarchical allreduce;
// a direct call elsewhere declines). Not a rank-order algorithm: deterministic mode never
// selects it. The whole vector's result lives in a buffer of this call (small vectors).
// Result: block r of the reduction in recvbuf of rank r.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"

namespace overpass {

Status reduceScatterHierarchical(const CollArgs& args, Team& team) {
  if (!overSeveralNodes(team))
    return decline(args.coll, "hierarchical",
                   "the team is not on several nodes with one of 2+ ranks");
  if (args.count == 0) return Status::kOk;
  const BlockLayout& b = args.recvBlocks;
  const int rank = team.rank();
  std::vector<unsigned char> whole(args.bytes);
  CollArgs all = args;
  all.coll = Collective::kAllreduce;
  all.recvbuf = whole.data();
  all.recvBlocks = {};
  OVERPASS_CHECK(allreduceHierarchical(all, team));
  if (b.bytes[rank]) std::memcpy(args.recvbuf, whole.data() + b.offset[rank], b.bytes[rank]);
  return Status::kOk;
}

}  // namespace overpass
