// Broadcast by scatter then allgather (van de Geijn), for large messages.
//
// Steps: the message is cut into p pieces whose sizes differ by at most one byte, piece v for the
// rank v = (rank - root) mod p relative to the root, in message order (a piece may be empty when
// bytes < p). 1. Binomial scatter: rank v receives the pieces of its subtree [v, v + lowbit(v))
// from v - lowbit(v), straight into place in recvbuf, then sends [v + m, v + 2m) to v + m for
// every power of two m below lowbit(v), largest first; afterwards rank v holds piece v. 2. Ring
// allgather in relative ranks: in step s (1..p-1) rank v sends piece (v - s + 1) mod p to v + 1
// and receives piece (v - s) mod p from v - 1; the root already holds every piece, so the last
// rank sends nothing to it and it receives nothing.
// Cost: scatter ceil(log2 p) alpha + (p-1)/p n beta (the root sends n/2 + n/4 + ...), allgather
// (p - 1) alpha + (p-1)/p n beta: (ceil(log2 p) + p - 1) alpha + 2 (p-1)/p n beta, against
// ceil(log2 p) (alpha + n beta) for the binomial tree, so for large messages.
// Preconditions: none (correct for any size; degrades to empty pieces when bytes < p).
// Result: recvbuf on every rank.
#include <algorithm>
#include <span>

#include "coll/algorithms.h"

namespace overpass {

Status bcastScatterAllgather(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (size == 1 || args.bytes == 0) return Status::kOk;
  auto* buf = static_cast<unsigned char*>(args.recvbuf);
  const std::size_t base = args.bytes / size, extra = args.bytes % size;
  // Byte offset of piece i (0 <= i <= p): pieces [a, b) span [offset(a), offset(b)).
  auto offset = [&](int i) {
    return static_cast<std::size_t>(i) * base + std::min<std::size_t>(i, extra);
  };
  auto absolute = [&](int v) { return (v + args.root) % size; };
  const int v = (rank - args.root + size) % size;

  // 1. Binomial scatter of the pieces.
  int mask = 1;
  while (mask < size && !(v & mask)) mask <<= 1;
  if (v != 0) {
    const int end = std::min(v + mask, size);
    OVERPASS_CHECK(
        team.transport.recv(buf + offset(v), offset(end) - offset(v), absolute(v - mask), tag));
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask >= size) continue;
    const int first = v + mask, end = std::min(v + 2 * mask, size);
    OVERPASS_CHECK(team.transport.send(buf + offset(first), offset(end) - offset(first),
                                       absolute(first), tag));
  }

  // 2. Ring allgather of the pieces.
  const int right = absolute(v + 1), left = absolute(v + size - 1);
  auto piece = [&](int i) { return (i % size + size) % size; };
  for (int s = 1; s < size; ++s) {
    const int out = piece(v - s + 1), in = piece(v - s);
    const P2POp ops[2] = {P2POp::recv(buf + offset(in), offset(in + 1) - offset(in), left),
                          P2POp::send(buf + offset(out), offset(out + 1) - offset(out), right)};
    // The root receives nothing and the last rank sends nothing.
    const std::span<const P2POp> batch(ops + (v == 0), 2 - (v == 0) - (v == size - 1));
    OVERPASS_CHECK(team.transport.exchange(batch, tag));
  }
  return Status::kOk;
}

}  // namespace overpass
