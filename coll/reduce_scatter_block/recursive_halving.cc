// Reduce_scatter_block by recursive halving.
//
// Steps: with p2 the largest power of two <= p and r = p - p2, the first 2r ranks pair up and
// each even one hands its whole input (p blocks) to the odd one above it, which reduces it in.
// The p2 remaining ranks take virtual ranks v; v < r stands for blocks 2v and 2v + 1, v >= r for
// block v + r. At distance p2/2, p2/4, ..., 1 a rank sends the half of its current range of
// blocks that its partner keeps and reduces the partner's copy of the half it keeps; after
// log2(p2) steps virtual rank v holds its blocks reduced over all ranks. An odd rank of the first
// 2r then returns block 2v to its even partner. The first step reduces the input straight into
// the work buffer and the last straight into recvbuf, so no block is copied.
// Cost: log2(p2) alpha + (p2 - 1)/p2 p n (beta + gamma), plus, when r > 0,
// 2 alpha + p n (beta + gamma) + n beta for the fold and the hand-back; n = one block. Same
// bandwidth as the ring at powers of two with logarithmic latency.
// Preconditions: a commutative operation; sendbuf and recvbuf do not overlap.
// Result: block r of the reduction in recvbuf of rank r.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/select/cost_model.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status reduceScatterBlockRecursiveHalving(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes, total = n * size;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (size == 1 || args.count == 0) {
    if (n) std::memcpy(out, in, n);
    return Status::kOk;
  }

  const int p2 = floorPow2(size);
  const int extra = size - p2;
  const std::size_t element = n / args.count;
  auto reduce = [&](const void* from, void* inout, std::size_t bytes) {
    reduceLocal(from, inout, bytes / element, args.type, args.op, args.user);
  };
  // Virtual rank v's blocks are [firstBlock(v), firstBlock(v + 1)); firstBlock(p2) = p.
  auto firstBlock = [&](int v) { return v < extra ? 2 * v : v + extra; };
  auto offset = [&](int v) { return static_cast<std::size_t>(firstBlock(v)) * n; };
  auto rangeBytes = [&](int v, int count) { return offset(v + count) - offset(v); };
  auto realRank = [&](int v) { return v < extra ? v * 2 + 1 : v + extra; };
  if (rank < 2 * extra && rank % 2 == 0) {  // hands its input to rank + 1, waits for its block
    const P2POp ops[2] = {P2POp::recv(out, n, rank + 1), P2POp::send(in, total, rank + 1)};
    return team.transport.exchange(ops, tag);
  }
  // The rank's partial sums, at the offsets of the whole vector; only the range it still holds
  // is valid.
  auto* work = static_cast<unsigned char*>(team.scratch.get(0, total));

  const unsigned char* cur = in;  // where the range the rank holds is: input, then work
  int newRank;
  bool folded = false;
  if (rank < 2 * extra) {
    OVERPASS_CHECK(team.transport.recv(work, total, rank - 1, tag));
    reduce(in, work, total);
    cur = work;
    newRank = rank / 2;
    folded = true;
  } else {
    newRank = rank - extra;
  }

  // [lo, lo + 2 mask) is the range of virtual blocks this rank still holds.
  int lo = 0;
  for (int mask = p2 / 2; mask > 0; mask >>= 1) {
    const int peer = realRank(newRank ^ mask);
    const bool upper = (newRank & mask) != 0;
    const int keep = upper ? lo + mask : lo, give = upper ? lo : lo + mask;
    const std::size_t keepBytes = rangeBytes(keep, mask);
    // The last step of an unfolded rank receives into recvbuf (its one block); a step that
    // still reads the input receives into the work buffer in place; others into scratch.
    unsigned char* target;
    if (mask == 1 && !folded)
      target = out;
    else if (cur == in)
      target = work + offset(keep);
    else
      target = static_cast<unsigned char*>(team.scratch.get(1, keepBytes));
    const P2POp ops[2] = {P2POp::recv(target, keepBytes, peer),
                          P2POp::send(cur + offset(give), rangeBytes(give, mask), peer)};
    OVERPASS_CHECK(team.transport.exchange(ops, tag));
    if (target == out || target == work + offset(keep))
      reduce(cur + offset(keep), target, keepBytes);
    else
      reduce(target, work + offset(keep), keepBytes);
    cur = work;
    lo = keep;
  }
  if (!folded) return Status::kOk;
  // Virtual rank newRank < extra holds blocks rank - 1 and rank: hand back the first.
  const P2POp op = P2POp::send(work + (rank - 1) * n, n, rank - 1);
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start({&op, 1}, tag, &request));
  std::memcpy(out, work + rank * n, n);
  return team.transport.wait(request);
}

}  // namespace overpass
