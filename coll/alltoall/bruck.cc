// Alltoall by Bruck's algorithm, for small blocks: ceil(log2 p) messages per rank instead of p - 1.
//
// Steps: conceptually rank r first rotates its blocks, W[i] = block (r + i) mod p of sendbuf
// (the block for rank r + i); then in step k (0..ceil(log2 p)-1) it sends every W[i] whose index
// has bit k set, packed into one message, to r + 2^k, and replaces them with the ones arriving
// from r - 2^k; in the end W[i] is the block of rank r - i, which goes to recvbuf block
// (r - i) mod p. The rotations are never materialised: a block that has not moved yet (no bit of
// i below k set) is packed straight from sendbuf, and one that moves for the last time (no bit of
// i above k set) is unpacked straight into its final place in recvbuf; only blocks still to
// travel go through a scratch W. The own block is copied while the first step is in flight.
// Cost: ceil(log2 p) x (alpha + p/2 n beta), n = one block, plus the packing and unpacking:
// ceil(log2 p) p n bytes copied locally (modelled at gamma per byte, memory-bound like a
// reduction), against (p - 1)(alpha + n beta) for pairwise exchange.
// Preconditions: sendbuf and recvbuf do not overlap. Uses scratch slots kBlocks (W), kIncoming2 and
// kIncoming (the packed outgoing and incoming blocks). Result: block j of rank i's sendbuf at block
// i of rank j's recvbuf.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/alltoall_blocks.h"

namespace overpass {

Status alltoallBruck(const CollArgs& args, Team& team) {
  AlltoallBlocks b(args, team);
  if (b.empty()) return Status::kOk;
  const int rank = b.rank, size = b.size;
  const std::size_t n = b.n;
  auto wBlock = [&](unsigned char* w, int i) { return w + static_cast<std::size_t>(i) * n; };
  const std::size_t half = static_cast<std::size_t>(size / 2 + 1) * n;  // bound on one message
  auto* w = static_cast<unsigned char*>(
      team.scratch.get(ScratchSlot::kBlocks, static_cast<std::size_t>(size) * n));
  auto* packed = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming2, half));
  auto* incoming = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, half));
  for (int bit = 1; bit < size; bit <<= 1) {
    std::size_t bytes = 0;
    for (int i = bit; i < size; ++i) {
      if (!(i & bit)) continue;
      const bool moved = (i & (bit - 1)) != 0;
      std::memcpy(packed + bytes, moved ? wBlock(w, i) : b.send((rank + i) % size), n);
      bytes += n;
    }
    const int dst = (rank + bit) % size, src = (rank - bit + size) % size;
    const P2POp ops[2] = {P2POp::recv(incoming, bytes, src), P2POp::send(packed, bytes, dst)};
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start(ops, b.tag, &request));
    b.copyOwn();
    OVERPASS_CHECK(team.transport.wait(request));
    bytes = 0;
    for (int i = bit; i < size; ++i) {
      if (!(i & bit)) continue;
      const bool last = (i >> 1) < bit;  // no bit of i above this one
      std::memcpy(last ? b.recv((rank - i + size) % size) : wBlock(w, i), incoming + bytes, n);
      bytes += n;
    }
  }
  b.copyOwn();  // p = 1: no step
  return Status::kOk;
}

}  // namespace overpass
