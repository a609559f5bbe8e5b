#include "coll/phases/node_reduce_scatter.h"

#include <algorithm>
#include <cstring>

#include "coll/phases/ring_reduce_scatter.h"
#include "coll/phases/shm_reduce.h"
#include "transport/sub_transport.h"

namespace overpass {

Status nodeReduceScatter(const CollArgs& args, Team& team, const BlockSplit& blocks,
                         unsigned char* work) {
  const Topology& topo = *team.topology;
  const int rank = team.rank(), local = topo.localRank(rank), nodeSize = blocks.size;
  if (nodeSize == 1) {  // the node's sum is the rank's own vector
    if (args.sendbuf != work) std::memcpy(work, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  if (ShmChannel* channel = nodeChannel(team, blocks)) {
    ShmChannel& ch = *channel;
    const auto* in = static_cast<const unsigned char*>(args.sendbuf);
    const std::size_t e = blocks.element, piece = ch.bufferBytes() / (e * nodeSize);
    const std::size_t most = blocks.maxElements();
    for (std::size_t first = 0; first < most; first += piece) {
      auto count = [&](int q) {
        return blocks.elements(q) > first ? std::min(piece, blocks.elements(q) - first) : 0;
      };
      const std::size_t round = nodeSize * piece * e;  // at most: the last pieces may be shorter
      OVERPASS_CHECK(ch.reserve());
      for (int q = 0; q < nodeSize; ++q)
        std::memcpy(ch.next(round) + q * piece * e, in + blocks.offset(q) + first * e,
                    count(q) * e);
      OVERPASS_CHECK(ch.sync());
      shmReduceSlice(args, ch, round, local * piece * e, count(local),
                     work + blocks.offset(local) + first * e);
    }
    return Status::kOk;
  }
  SubTransport nodeTransport(team.transport, topo.nodeRanks(topo.nodeOf(rank)));
  Team nodeTeam{nodeTransport, team.scratch};
  return ringReduceScatter(args, nodeTeam, blocks, args.sendbuf, work);
}

}  // namespace overpass
