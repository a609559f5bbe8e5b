// The shm allgather (root = kEveryRank) and gather to `root`: per chunk of the block (up to one
// buffer), every rank copies its chunk into its buffer (a gather's root only where the block
// takes one round), one round, and each rank that needs the result copies every rank's chunk out;
// the others do not wait (gather).
// Cost per chunk: one round + copy in (n) + copy out (p n) where the result is needed.
// shmAllgatherBlocks: the same in place, the blocks of a BlockSplit in one vector, the last step
// of the reductions that leave each rank one finished block (the hierarchical allreduce's node
// step, the cma allreduce).
#pragma once

#include <algorithm>
#include <cstring>

#include "coll/coll_args.h"
#include "coll/math/blocks.h"
#include "coll/phases/shm_reduce.h"
#include "coll/team.h"

namespace overpass {

inline Status shmGather(const CollArgs& args, Team& team, int root) {
  const int p = team.size(), r = team.rank();
  const bool needsResult = root == kEveryRank || r == root;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  if (p == 1) {
    if (in != out) std::memcpy(out, in, n);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  // A gather's root shares nothing (nobody reads its buffer), and from two rounds it copies
  // nothing in: its copies per round go from p + 1 chunks to p. Within one round it still does:
  // at np 4 on 2 cores a root that reached its wait sooner gave its core away sooner, 1-3 us
  // slower at 16-256 KiB (docs/PERFORMANCE.md, "The gather's root copies nothing in").
  const bool shares = r != root || n <= ch.bufferBytes();
  for (std::size_t off = 0; off < n; off += ch.bufferBytes()) {
    const std::size_t c = std::min(ch.bufferBytes(), n - off);
    if (shares) {
      OVERPASS_CHECK(ch.reserve());
      std::memcpy(ch.next(c), in + off, c);
    }
    OVERPASS_CHECK(ch.sync(needsResult ? ShmChannel::kAll : r));
    if (!needsResult) continue;
    // This rank's own chunk from its send buffer, not from the line it has just published
    // (docs/PERFORMANCE.md, "The order of the polls").
    for (int q = 0; q < p; ++q)
      if (q != r) std::memcpy(out + q * n + off, ch.peer(q, c), c);
    if (out + r * n != in) std::memcpy(out + r * n + off, in + off, c);
  }
  return Status::kOk;
}

// Every rank's block of `blocks` (block q: the channel's rank q's, at out + blocks.offset(q))
// copied into every rank's `out`: per round, each rank copies the next piece of its block (up to
// one buffer, in bytes: an element may span two rounds) into its buffer, then every other rank's
// piece out. As many rounds as the largest block takes, alike on every rank; each waits for every
// rank, so none returns before every rank has finished whatever it did before its first round.
inline Status shmAllgatherBlocks(ShmChannel& ch, const BlockSplit& blocks, unsigned char* out) {
  const int me = ch.rank();
  const std::size_t part = ch.bufferBytes(), most = blocks.maxElements() * blocks.element;
  for (std::size_t at = 0; at < most; at += part) {
    auto piece = [&](int q) {
      return blocks.bytes(q) > at ? std::min(part, blocks.bytes(q) - at) : 0;
    };
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(piece(me)), out + blocks.offset(me) + at, piece(me));
    OVERPASS_CHECK(ch.sync());
    for (int q = 0; q < ch.size(); ++q)
      if (q != me) std::memcpy(out + blocks.offset(q) + at, ch.peer(q, piece(q)), piece(q));
  }
  return Status::kOk;
}

}  // namespace overpass
