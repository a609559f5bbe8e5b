// Reduce on the ranks of one node by reading the peers' memory and writing the root's (Linux
// cross-memory attach, coll/phases/cma.h): no copy into shared memory and out again, and every
// rank works on its own block.
//
// Steps: round 1 (cmaOpen), each rank publishes the addresses of its send and receive
// buffers. Each rank then owns one block of the vector (coll/math/blocks.h): chunk by
// chunk it reads the peers' elements of that block into bounce buffers (the last-level cache holds
// them), combines them in rank order, and writes the result into the root's recvbuf
// (process_vm_writev; the root's own block straight into it). Round 2: every block is written and
// no rank reads another's input any more; each may return. Memory traffic per rank (n bytes, p
// ranks): n (p - 1)/p read from the peers, n/p of its own, n/p written into the root's recvbuf,
// plus the bounce buffers; two rounds per call whatever n. The shm reduce copies every vector in
// and the result out (2 rounds per buffer-sized chunk); Open MPI's linear reduce (its choice at 4
// ranks from 1 MiB on this machine) has the root receive every vector into a temporary and combine
// it, alone. Preconditions: the ranks share one node's channel and may read each other's memory
// (learnt at the channel's first call, coll/phases/cma.h; where any cannot, all decline at every
// call). Combines in rank order: bits equal to every other rank-order algorithm's. In place at the
// root: each block of its recvbuf is written only by the rank that owns it, after reading it.
// Result: recvbuf at the root (other ranks' may be null).
#include "coll/phases/cma.h"
#include "coll/algorithms.h"
#include "coll/math/blocks.h"
#include "common/log.h"
#include "shm/channel.h"

namespace overpass {

Status reduceCma(const CollArgs& args, Team& team) {
  if (!team.shm) return Status::kDeclined;
  if (args.count == 0) return Status::kOk;
  std::vector<CmaCard> cards;
  if (const Status opened = cmaOpen(args, team, cards); opened != Status::kOk) return opened;
  ShmChannel& ch = *team.shm;
  const int me = ch.rank();
  const BlockSplit blocks(args, ch.size());
  if (const Status s =
          cmaReduceSlice(args, team, cards, blocks.first(me), blocks.first(me + 1), args.root);
      s != Status::kOk)
    return s;
  OVERPASS_CHECK(ch.sync());  // every block written; nobody reads the inputs any more
  return Status::kOk;
}

}  // namespace overpass
