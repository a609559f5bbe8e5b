// Reduce_scatter through the node's shared memory, as the shm reduce_scatter_block, over uneven
// blocks: per round a piece of every block, in a slot of the buffer in proportion to the block
// (every rank knows every block, so all agree on the slots and the rounds). Each rank copies the
// pieces of the p - 1 blocks for the other ranks into its buffer; then rank r folds slot r of
// every rank's buffer in rank order, ((x0 op x1) op x2) ..., the running result as the left
// operand, its own operand read from its send buffer (coll/phases/shm_fold.h): the bits of every
// rank-order algorithm (deterministic mode). Every rank works on its own block in every round,
// so the ranks copy and combine side by side also where the blocks are large.
// Cost per round: copy in (p - 1 pieces) + p - 1 reductions of the own piece.
// Preconditions: the team shares one channel whose buffer holds an element per rank; sendbuf and
// recvbuf do not overlap (the shim resolves MPI_IN_PLACE into a copy).
// Result: block r of the reduction in recvbuf of rank r.
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/phases/shm_fold.h"

namespace overpass {

Status reduceScatterShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const BlockLayout& b = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (args.bytes == 0) return Status::kOk;
  if (p == 1) {
    if (b.bytes[0]) std::memcpy(out, in + b.offset[0], b.bytes[0]);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t e = args.bytes / args.count, buffer = ch.bufferBytes();
  const auto ranks = static_cast<std::size_t>(p);
  if (buffer < ranks * e)
    return decline(args.coll, "shm", "a shared-memory buffer holds less than an element per rank");
  // Block q's slot in every round: at least an element, at most the block, and of the rest of the
  // buffer a share in proportion to the block, so that every block takes about as many rounds as
  // the whole vector would in one buffer (blocks of 10 and 1 take 10 and 1 parts of it).
  const std::size_t spare = buffer - ranks * e;
  std::vector<std::size_t> slot(ranks), start(ranks + 1);
  std::size_t rounds = 0;
  for (std::size_t q = 0; q < ranks; ++q) {
    const std::size_t bytes = b.bytes[q];
    const auto share =
        static_cast<std::size_t>(static_cast<unsigned __int128>(spare) * bytes / args.bytes);
    slot[q] = std::min(bytes, e + share / e * e);
    start[q + 1] = start[q] + slot[q];
    if (bytes) rounds = std::max(rounds, (bytes + slot[q] - 1) / slot[q]);
  }
  const std::size_t round = start[ranks];
  const ShmFold fold(args, team);
  // The bytes of block q in round k.
  auto piece = [&](std::size_t q, std::size_t k) {
    const std::size_t at = k * slot[q];
    return b.bytes[q] > at ? std::min(slot[q], b.bytes[q] - at) : 0;
  };
  const auto me = static_cast<std::size_t>(r);
  for (std::size_t k = 0; k < rounds; ++k) {
    OVERPASS_CHECK(ch.reserve());
    unsigned char* mine = ch.next(round);
    for (std::size_t q = 0; q < ranks; ++q)  // the own slot stays unwritten: no peer reads it
      if (const std::size_t n = piece(q, k); q != me && n)
        std::memcpy(mine + start[q], in + b.offset[q] + k * slot[q], n);
    OVERPASS_CHECK(ch.sync());
    if (const std::size_t n = piece(me, k)) {
      const std::size_t at = k * slot[me];
      fold.fold(p - 1, round, start[me], n, out + at, in + b.offset[me] + at);
    }
  }
  return Status::kOk;
}

}  // namespace overpass
