#include "coll/phases/ring_reduce_scatter.h"

#include <cstring>

#include "kernels/reduce_kernels.h"

namespace overpass {

Status ringReduceScatter(const CollArgs& args, Team& team, const BlockSplit& blocks,
                         const void* input, unsigned char* work) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const bool copy = input != work;
  const auto* in = static_cast<const unsigned char*>(input);
  auto* incoming = static_cast<unsigned char*>(
      team.scratch.get(ScratchSlot::kPhaseIncoming, blocks.maxElements() * blocks.element));
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int k = 0; k < size - 1; ++k) {
    const int sendBlock = blocks.wrap(rank - k - 1), recvBlock = blocks.wrap(rank - k - 2);
    // Step 0 sends straight from the input and copies it into `work` while in flight.
    const unsigned char* source = (k == 0 && copy ? in : work) + blocks.offset(sendBlock);
    const P2POp ops[2] = {P2POp::recv(incoming, blocks.bytes(recvBlock), left),
                          P2POp::send(source, blocks.bytes(sendBlock), right)};
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start(ops, tag, &request));
    if (k == 0 && copy) std::memcpy(work, in, args.bytes);
    OVERPASS_CHECK(team.transport.wait(request));
    reduceLocal(incoming, work + blocks.offset(recvBlock), blocks.elements(recvBlock), args.type,
                args.op, args.user);
  }
  return Status::kOk;
}

}  // namespace overpass
