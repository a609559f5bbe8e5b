// Reduce_scatter through the node's shared memory, as the shm reduce_scatter_block, over uneven
// blocks: per round a piece of every block, in a slot of the buffer in proportion to the block,
// in the fewest rounds whose slots fit (every rank knows every block, so all agree on the slots
// and the rounds). Each rank copies the pieces of the p - 1 blocks for the other ranks into its
// buffer, which holds no slot for its own; then rank r folds its piece from every other rank's
// buffer in rank order, ((x0 op x1) op x2) ..., the running result as the left operand, its own
// operand read from its send buffer (coll/phases/shm_fold.h): the bits of every rank-order
// algorithm (deterministic mode). Every rank works on its own block in every round, so the ranks
// copy and combine side by side also where the blocks are large.
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
  // In R rounds block q's slot is its R-th part in whole units of u bytes, at most the block: no
  // round carries only a block's tail, and blocks of 10 and 1 take 10 and 1 parts of the buffer.
  // Each rank's buffer holds the slots of the other ranks' blocks in rank order, its own left out
  // (no peer reads it). The units are whole cache lines where an element divides one (every piece
  // then starts on a line of the buffer and whole lines into its block), else whole elements.
  const std::size_t line = 64 % e == 0 ? 64 : e;
  std::vector<std::size_t> slot(ranks), start(ranks + 1);
  // Lays the slots out for R rounds in units of u; returns the fullest buffer's bytes per round
  // (all slots' widths but the narrowest).
  auto layOut = [&](std::size_t rounds, std::size_t u) {
    std::size_t narrowest = ~std::size_t{0};
    for (std::size_t q = 0; q < ranks; ++q) {
      const std::size_t part = (b.bytes[q] + rounds - 1) / rounds;
      slot[q] = std::min(b.bytes[q], (part + u - 1) / u * u);
      const std::size_t width = (slot[q] + u - 1) / u * u;
      narrowest = std::min(narrowest, width);
      start[q + 1] = start[q] + width;
    }
    return start[ranks] - narrowest;
  };
  // Over R rounds the fullest buffer holds all blocks but the smallest, `rest` bytes: at least
  // rest / R per round and less than a unit more per slot. One round where that fits in lines;
  // else the fewest rounds whose slots of whole elements fit, by bisection between those bounds
  // (the widths never grow with the rounds).
  const std::size_t rest = args.bytes - *std::min_element(b.bytes, b.bytes + ranks);
  std::size_t rounds = 1;
  if (rest + (ranks - 1) * line > buffer) {
    const std::size_t room = buffer - (ranks - 1) * e;  // > 0: it holds an element per rank
    std::size_t lo = std::max<std::size_t>(1, (rest + buffer - 1) / buffer);
    rounds = std::max(lo, (rest + room - 1) / room);
    while (lo < rounds) {
      const std::size_t mid = lo + (rounds - lo) / 2;
      if (layOut(mid, e) <= buffer)
        rounds = mid;
      else
        lo = mid + 1;
    }
  }
  // Elements where the round then sits beside its stamp, in the line that arrives with it (np 2,
  // 16-32 B: 1.30-1.62x Open MPI, in lines 0.96-1.37x), or where lines take more rounds; the
  // slots stay laid out as last chosen. `round`: named alike by every writer and reader.
  std::size_t round = layOut(rounds, e);
  if (round > ShmChannel::kBesideBytes && line != e) {
    const std::size_t inLines = layOut(rounds, line);
    round = inLines <= buffer ? inLines : layOut(rounds, e);
  }
  // Where block q's slot sits in rank w's buffer: after the slots before it but w's own.
  auto place = [&](std::size_t w, std::size_t q) {
    return w < q ? start[q] - (start[w + 1] - start[w]) : start[q];
  };
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
    for (std::size_t q = 0; q < ranks; ++q)
      if (const std::size_t n = piece(q, k); q != me && n)
        std::memcpy(mine + place(me, q), in + b.offset[q] + k * slot[q], n);
    OVERPASS_CHECK(ch.sync());
    if (const std::size_t n = piece(me, k)) {
      const std::size_t at = k * slot[me];
      fold.fold(
          p - 1, round, [&](int w) { return place(static_cast<std::size_t>(w), me); }, n, out + at,
          in + b.offset[me] + at);
    }
  }
  return Status::kOk;
}

}  // namespace overpass
