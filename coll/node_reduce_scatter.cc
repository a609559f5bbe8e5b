#include "coll/node_reduce_scatter.h"

#include <algorithm>
#include <cstring>

#include "coll/shm_reduce.h"
#include "ucx_transport/sub_transport.h"

namespace overpass {

Status nodeReduceScatter(const CollArgs& args, Team& team, const RingBlocks& slices,
                         unsigned char* work) {
  const Topology& topo = *team.topology;
  const int rank = team.rank(), local = topo.localRank(rank), perNode = slices.size;
  if (ShmChannel* channel = nodeChannel(team, slices)) {
    ShmChannel& ch = *channel;
    const auto* in = static_cast<const unsigned char*>(args.sendbuf);
    const std::size_t e = slices.element, piece = ch.bufferBytes() / (e * perNode);
    for (std::size_t first = 0; first < slices.elements(0); first += piece) {
      auto count = [&](int q) {
        return slices.elements(q) > first ? std::min(piece, slices.elements(q) - first) : 0;
      };
      OVERPASS_CHECK(ch.reserve());
      for (int q = 0; q < perNode; ++q)
        std::memcpy(ch.next() + q * piece * e, in + slices.offset(q) + first * e, count(q) * e);
      OVERPASS_CHECK(ch.sync());
      shmReduceSlice(args, ch, local * piece * e, count(local),
                     work + slices.offset(local) + first * e);
    }
    return Status::kOk;
  }
  SubTransport nodeTransport(team.transport, topo.nodeRanks(topo.nodeOf(rank)));
  Team nodeTeam{nodeTransport, team.scratch};
  return ringReduceScatter(args, nodeTeam, slices, args.sendbuf, work);
}

}  // namespace overpass
