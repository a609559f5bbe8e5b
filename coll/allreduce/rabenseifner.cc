// Allreduce by Rabenseifner's algorithm: reduce-scatter by recursive halving, then allgather by
// recursive doubling.
//
// Steps: with p2 the largest power of two <= p and r = p - p2, the first 2r ranks pair up and
// each even one hands its vector to the odd one above it, which reduces it in (the fold of
// coll/math/pow2_fold.h, as recursive_doubling.cc does). The vector is cut into p2 blocks whose
// sizes differ by at most one element. Halving (coll/phases/recursive_halving.h): at distance p2/2,
// p2/4, ..., 1 a rank sends the half of its current block range that its partner keeps and reduces
// the partner's copy of the half it keeps; afterwards virtual rank v holds block v reduced over all
// ranks. Doubling: at distance 1, 2, ..., p2/2 partners swap the ranges they hold until every rank
// holds every block. Finally the odd ranks of the first 2r return the result to their even
// partners. Cost: 2 log2(p2) alpha + 2 (p2 - 1)/p2 n beta + (p2 - 1)/p2 n gamma, plus, when r > 0,
// 2 alpha + 2 n beta + n gamma for the fold and the hand-back: bandwidth-optimal with
// logarithmic latency, for large vectors; needs count >= p2 to be worth it (smaller counts
// leave blocks empty, and are still correct).
// Preconditions: a commutative operation. Every block is reduced on one rank and then copied, so
// every rank ends with bitwise the same vector. Result: recvbuf on every rank.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/math/blocks.h"
#include "coll/math/pow2_fold.h"
#include "coll/phases/pow2_fold.h"
#include "coll/phases/recursive_halving.h"
#include "kernels/reduce_kernels.h"

namespace overpass {
namespace {

// The halving phase's view of the vector: virtual block v is block v of the p2 blocks, the data
// in recvbuf (read from sendbuf until the copy into recvbuf, made during the first exchange), the
// partner's half received into scratch and reduced into recvbuf.
class Halving final : public HalvingPlan {
 public:
  Halving(const CollArgs& args, const BlockSplit& blocks, unsigned char* incoming,
          bool& copyPending)
      : args_(args),
        blocks_(blocks),
        out_(static_cast<unsigned char*>(args.recvbuf)),
        incoming_(incoming),
        copyPending_(copyPending) {}
  std::size_t offset(int v) const override { return blocks_.offset(v); }
  const unsigned char* source(const HalvingStep&) override {
    return copyPending_ ? static_cast<const unsigned char*>(args_.sendbuf) : out_;
  }
  unsigned char* target(const HalvingStep&) override { return incoming_; }
  void whileFirstInFlight() override {
    if (copyPending_) std::memcpy(out_, args_.sendbuf, args_.bytes);
    copyPending_ = false;
  }
  void combine(const HalvingStep& step, unsigned char* received) override {
    reduceLocal(received, out_ + step.keepOffset, step.keepBytes / blocks_.element, args_.type,
                args_.op, args_.user);
  }

 private:
  const CollArgs& args_;
  const BlockSplit& blocks_;
  unsigned char* out_;
  unsigned char* incoming_;
  bool& copyPending_;
};

}  // namespace

Status allreduceRabenseifner(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && args.bytes) std::memmove(out, args.sendbuf, args.bytes);
    return Status::kOk;
  }

  const Pow2Fold fold(size);
  const int p2 = fold.p2;
  const BlockSplit blocks(args, p2);  // block b of the p2 blocks; offset(p2) is the end
  auto* incoming =
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, args.bytes));
  // The input is copied into recvbuf while the first exchange is in flight (sending straight
  // from sendbuf), so that peers are not held up behind the local copy.
  bool copyPending = args.sendbuf != args.recvbuf;
  auto copyIn = [&] {
    if (copyPending) std::memcpy(out, args.sendbuf, args.bytes);
    copyPending = false;
  };
  auto rangeBytes = [&](int firstBlock, int numBlocks) {
    return blocks.offset(firstBlock + numBlocks) - blocks.offset(firstBlock);
  };

  if (fold.foldedOut(rank))  // hands its data to rank + 1 and waits for the result
    return foldOut(team, tag, fold, copyPending ? args.sendbuf : out, args.bytes, out, args.bytes);
  if (fold.absorbs(rank)) {
    OVERPASS_CHECK(foldReceive(team, tag, fold, incoming, args.bytes, copyIn));
    reduceLocal(incoming, out, args.count, args.type, args.op, args.user);
  }

  // Reduce-scatter by recursive halving: virtual rank v ends with block v reduced in recvbuf.
  Halving halving(args, blocks, incoming, copyPending);
  OVERPASS_CHECK(recursiveHalving(team, tag, fold, halving));

  // Allgather by recursive doubling: this rank holds the mask blocks from its own aligned start.
  // Empty ranges (count < p2) are not sent: both partners derive the sizes from the same
  // blocks, so they skip the same messages.
  const int newRank = fold.virtualRank(rank);
  for (int mask = 1; mask < p2; mask <<= 1) {
    const int peerNew = newRank ^ mask;
    const int have = newRank & ~(mask - 1), get = peerNew & ~(mask - 1);
    const int peer = fold.realRank(peerNew);
    P2POp ops[2];
    std::size_t n = 0;
    if (const std::size_t bytes = rangeBytes(get, mask))
      ops[n++] = P2POp::recv(out + blocks.offset(get), bytes, peer);
    if (const std::size_t bytes = rangeBytes(have, mask))
      ops[n++] = P2POp::send(out + blocks.offset(have), bytes, peer);
    OVERPASS_CHECK(exchangeWhile(team.transport, {ops, n}, tag, [] {}));
  }
  if (fold.absorbs(rank)) return foldHandBack(team, tag, fold, out, args.bytes);
  return Status::kOk;
}

}  // namespace overpass
