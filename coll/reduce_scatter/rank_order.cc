// Reduce_scatter in rank order: every rank sends block q of its input to rank q, which combines
// the p contributions in rank order, ((x0 op x1) op x2) ..., with the running result as the left
// operand: the bits of every rank-order algorithm (deterministic mode).
// Cost: (p - 1) alpha + (N - n_r) beta + (p - 1) n_r gamma.
// Preconditions: sendbuf and recvbuf do not overlap (the shim passes a copy in place).
// Result: block r of the reduction in recvbuf of rank r.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status reduceScatterRankOrder(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const BlockLayout& b = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const std::size_t mine = b.bytes[rank];
  if (size == 1 || args.count == 0 || mine == 0) {
    if (mine) std::memcpy(args.recvbuf, in + b.offset[rank], mine);
    if (size == 1 || args.count == 0) return Status::kOk;
  }
  // Contribution q lands at blocks + q * mine (the own one read where it is).
  auto* blocks = static_cast<unsigned char*>(
      team.scratch.get(ScratchSlot::kBlocks, mine * static_cast<std::size_t>(size)));
  std::vector<P2POp> ops;
  ops.reserve(2 * static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) {
    if (q == rank) continue;
    if (mine) ops.push_back(P2POp::recv(blocks + q * mine, mine, q));
    if (b.bytes[q]) ops.push_back(P2POp::send(in + b.offset[q], b.bytes[q], q));
  }
  if (!ops.empty()) OVERPASS_CHECK(team.transport.exchange(ops, tag));
  if (mine == 0) return Status::kOk;
  const std::size_t count = mine / (args.bytes / args.count);
  auto contribution = [&](int q) -> const unsigned char* {
    return q == rank ? in + b.offset[rank] : blocks + q * mine;
  };
  // ((x0 op x1) op x2) ...: step q's result in slot q (where x_q arrived, or the unused own
  // slot), the last one in recvbuf.
  const unsigned char* acc = contribution(0);
  for (int q = 1; q < size; ++q) {
    unsigned char* out =
        q == size - 1 ? static_cast<unsigned char*>(args.recvbuf) : blocks + q * mine;
    reduceInto(acc, contribution(q), out, count, args.type, args.op, args.user);
    acc = out;
  }
  return Status::kOk;
}

}  // namespace overpass
