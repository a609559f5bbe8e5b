// Allreduce on the ranks of one node by reading the peers' memory itself (Linux cross-memory
// attach, coll/phases/cma.h) for the reduction: no copy of the input into shared memory.
//
// Steps: round 1 (cmaOpen), each rank publishes the addresses of its send and receive
// buffers. Each rank then owns one block of the vector (coll/math/blocks.h): chunk by
// chunk it reads the peers' elements of that block into bounce buffers (the last-level cache holds
// them) and combines them in rank order, the last operand first copied into its recvbuf and the
// others' combination reduced into it, piece by piece (cmaReduceSlice; in place at rank 0 of two,
// whose own operand comes first, through a bounce buffer). Then the finished blocks go to every
// rank through the node's shared memory (shmAllgatherBlocks, one round per buffer of the largest
// block): the first of those rounds waits for every block to be done, and so for every read of a
// peer's input.
// Memory traffic per rank (n bytes, p ranks): n (p - 1)/p read from the peers for its block, its
// own input read once, its block copied into shared memory and the others' out, n written into
// recvbuf; at p = 2 2n read and 1.5n written, plus the bounce buffers (the shm allreduce moves
// 2.5n and 2n: copy in, reduce, copy out; Open MPI's single-copy ring about 2n and 1.5n plus its
// temporaries). Reading the others' blocks from their recvbufs (process_vm_readv) would move
// less, 1.5n and n, but this machine's kernel copies at 9-19 GB/s, memcpy at about 35
// (docs/PERFORMANCE.md, "The cma allreduce's second half through shared memory").
// Preconditions: the ranks share one node's channel and may read each other's memory (learnt at
// the channel's first call, coll/phases/cma.h; where any cannot, all decline at every call).
// Combines in rank order: bits equal to every other rank-order algorithm's. In place: a rank
// writes its result only into its own block, and the others' blocks only after the first round
// of the allgather, when nobody reads its input any more.
// Result: recvbuf on every rank.
#include <vector>

#include "coll/algorithms.h"
#include "coll/math/blocks.h"
#include "coll/phases/cma.h"
#include "coll/phases/shm_gather.h"
#include "shm/channel.h"

namespace overpass {

Status allreduceCma(const CollArgs& args, Team& team) {
  if (!team.shm) return Status::kDeclined;
  if (args.count == 0) return Status::kOk;
  std::vector<CmaCard> cards;
  if (const Status opened = cmaOpen(args, team, cards); opened != Status::kOk) return opened;
  ShmChannel& ch = *team.shm;
  const int me = ch.rank(), p = ch.size();
  const BlockSplit blocks(args, p);
  if (const Status s =
          cmaReduceSlice(args, team, cards, blocks.first(me), blocks.first(me + 1), me);
      s != Status::kOk)
    return s;
  // The finished blocks through the node's shared memory (above: two user copies beat one kernel
  // copy here). Its first round waits for every block.
  return shmAllgatherBlocks(ch, blocks, static_cast<unsigned char*>(args.recvbuf));
}

}  // namespace overpass
