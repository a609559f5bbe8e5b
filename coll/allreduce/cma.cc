// Allreduce on the ranks of one node by reading the peers' memory itself (Linux cross-memory
// attach, coll/phases/cma.h): no copy into shared memory and out again.
//
// Steps: round 1 (cmaOpen), each rank publishes the addresses of its send and receive
// buffers. Each rank then owns one block of the vector (coll/math/blocks.h): chunk by
// chunk it reads the peers' elements of that block into bounce buffers (the last-level cache holds
// them) and combines them in rank order, the last operand first copied into its recvbuf and the
// others' combination reduced into it, piece by piece (cmaReduceSlice; in place at rank 0 of two,
// whose own operand comes first, through a bounce buffer, and around the cache where the two
// ranks' cores are far and its block below 8 MiB: shm/core_distance.h). Round 2: every block is
// done (and no rank reads another's input any more). Each rank reads the other blocks from their
// owners' recvbufs into its own. Round 3: the recvbufs are read; each may return.
// Memory traffic per rank (n bytes, p ranks): n (p - 1)/p read from the peers for its block and
// the same again for the others' blocks, its own input read once, n written; at p = 2 1.5n read
// and n written, plus the bounce buffers; the shm allreduce moves 2.5n and 2n (copy in,
// reduce, copy out), Open MPI's single-copy ring about 2n and 1.5n plus its temporaries.
// Preconditions: the ranks share one node's channel and may read each other's memory (learnt at
// the channel's first call, coll/phases/cma.h; where any cannot, all decline at every call).
// Combines in rank order: bits equal to every other rank-order algorithm's. In place: a rank
// writes its result only into its own block, and the others' blocks only after round 2, when
// nobody reads its input any more.
// Result: recvbuf on every rank.
#include <cerrno>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/math/blocks.h"
#include "coll/phases/cma.h"
#include "common/log.h"
#include "shm/channel.h"

namespace overpass {
namespace {

// The block size from which a rank's result, where it goes through a bounce buffer (in place at
// rank 0 of two), is stored through the cache even where the cores are far. Measured when every
// result went through one: np 2, slow state, paired, four runs (docs/PERFORMANCE.md, "The cores'
// distance, agreed"),
// 4 / 8 / 16 / 32 / 64 MiB vectors (blocks of half): around the cache 1.10-1.24 / 1.17-1.34 /
// 1.07-1.30 / 1.23-1.39 / 1.27-1.36x Open MPI, through it 0.92-0.95 / 1.07-1.21 / 1.19-1.33 /
// 1.30-1.41 / 1.34-1.43x.
constexpr std::size_t kAroundCacheBelow = std::size_t{8} << 20;

}  // namespace

Status allreduceCma(const CollArgs& args, Team& team) {
  if (!team.shm) return Status::kDeclined;
  if (args.count == 0) return Status::kOk;
  std::vector<CmaCard> cards;
  if (const Status opened = cmaOpen(args, team, cards); opened != Status::kOk) return opened;
  ShmChannel& ch = *team.shm;
  const int me = ch.rank(), p = ch.size();
  const BlockSplit blocks(args, p);
  // Where the peer's core is far, a block that goes through a bounce buffer is stored around the
  // cache: the peer reads it from memory, faster there than out of this core's cache
  // (docs/PERFORMANCE.md, "Fresh input"). Not a block of kAroundCacheBelow or more: most of it
  // leaves this core's cache (1 MiB of L2 here) for the shared last level anyway, where the peer
  // reads it sooner than from memory. A result formed in recvbuf was faster, near or far (docs/
  // PERFORMANCE.md, "The cma result in recvbuf").
  const bool around =
      ch.cores().agreed == CoreDistance::kFar && blocks.bytes(me) < kAroundCacheBelow;
  if (const Status s =
          cmaReduceSlice(args, team, cards, blocks.first(me), blocks.first(me + 1), me, around);
      s != Status::kOk)
    return s;
  OVERPASS_CHECK(ch.sync());  // every block done; nobody reads the inputs any more

  auto* out = static_cast<unsigned char*>(args.recvbuf);
  for (int q = 0; q < p; ++q) {
    const CmaCard& owner = cards[static_cast<std::size_t>(q)];
    if (q == me || blocks.bytes(q) == 0) continue;
    if (!cmaRead(static_cast<pid_t>(ch.pid(q)), out + blocks.offset(q),
                 owner.out + blocks.offset(q), blocks.bytes(q))) {
      OVERPASS_ERROR("allreduce cma: reading the peer's memory failed: %s", std::strerror(errno));
      return Status::kTransportError;
    }
  }
  OVERPASS_CHECK(ch.sync());  // the recvbufs are read
  return Status::kOk;
}

}  // namespace overpass
