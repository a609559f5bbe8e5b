// Broadcast along a pipelined chain root -> root + 1 -> ... -> root - 1, for large messages.
//
// Steps: the message is cut into K = ceil(n / c) chunks of c = kBcastChainChunk bytes (the last
// one shorter). In relative ranks v = (rank - root) mod p, rank v > 0 first receives chunk 0 from
// v - 1; then in step k (0..K-1) it receives chunk k + 1 from v - 1 while forwarding chunk k to
// v + 1, both in one batch, so at most two chunks are in flight per rank (the root only sends,
// the last rank only receives). Chunk k reaches rank v after v + k steps.
// Cost: (p - 2 + K) x (alpha + c beta): about (p + n/c) alpha + n beta for n >> c, against
// ceil(log2 p) (alpha + n beta) for the binomial tree; with one chunk it is p - 1 full hops, so it
// serves messages of at least 2 chunks.
// Preconditions: none. Result: recvbuf on every rank.
#include <algorithm>
#include <span>

#include "coll/algorithms.h"

namespace overpass {

Status bcastChain(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (size == 1 || args.bytes == 0) return Status::kOk;
  auto* buf = static_cast<unsigned char*>(args.recvbuf);
  const std::size_t chunks = (args.bytes + kBcastChainChunk - 1) / kBcastChainChunk;
  auto chunkAt = [&](std::size_t k) { return buf + k * kBcastChainChunk; };
  auto chunkBytes = [&](std::size_t k) {
    return std::min(kBcastChainChunk, args.bytes - k * kBcastChainChunk);
  };
  const int v = (rank - args.root + size) % size;
  const int prev = (rank - 1 + size) % size, next = (rank + 1) % size;
  const bool receives = v != 0, forwards = v != size - 1;
  if (receives) OVERPASS_CHECK(team.transport.recv(chunkAt(0), chunkBytes(0), prev, tag));
  for (std::size_t k = 0; k < chunks; ++k) {
    const bool more = receives && k + 1 < chunks;
    if (!more && !forwards) break;
    const P2POp ops[2] = {
        P2POp::recv(more ? chunkAt(k + 1) : nullptr, more ? chunkBytes(k + 1) : 0, prev),
        P2POp::send(chunkAt(k), chunkBytes(k), next)};
    const std::span<const P2POp> batch(ops + !more, 2 - !more - !forwards);
    OVERPASS_CHECK(team.transport.exchange(batch, tag));
  }
  return Status::kOk;
}

}  // namespace overpass
