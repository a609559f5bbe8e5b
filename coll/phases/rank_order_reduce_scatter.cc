#include "coll/phases/rank_order_reduce_scatter.h"

#include <cstring>
#include <vector>

#include "kernels/reduce_kernels.h"

namespace overpass {

Status rankOrderReduceScatter(const CollArgs& args, Team& team, const BlockSplit& blocks,
                              const void* input, void* out) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const auto* in = static_cast<const unsigned char*>(input);
  const std::size_t mine = blocks.bytes(rank);
  // Every rank's contribution to block r, own included (copied, since `out` may overlap it).
  auto* slots =
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseBlocks, mine * size));
  std::vector<P2POp> ops;
  ops.reserve(2 * size);
  for (int q = 0; q < size; ++q) {
    if (q == rank) continue;
    ops.push_back(P2POp::recv(slots + q * mine, mine, q));
    ops.push_back(P2POp::send(in + blocks.offset(q), blocks.bytes(q), q));
  }
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  if (mine) std::memcpy(slots + rank * mine, in + blocks.offset(rank), mine);
  OVERPASS_CHECK(team.transport.wait(request));
  if (size == 1) {
    if (mine) std::memcpy(out, slots, mine);
    return Status::kOk;
  }
  const unsigned char* acc = slots;
  for (int q = 1; q < size; ++q) {
    unsigned char* target = q == size - 1 ? static_cast<unsigned char*>(out) : slots + q * mine;
    reduceInto(acc, slots + q * mine, target, blocks.elements(rank), args.type, args.op, args.user);
    acc = target;
  }
  return Status::kOk;
}

}  // namespace overpass
