// Reduce_scatter_block by recursive halving.
//
// Steps: with p2 the largest power of two <= p and r = p - p2, the first 2r ranks pair up and
// each even one hands its whole input (p blocks) to the odd one above it, which reduces it in
// (the fold of coll/math/pow2_fold.h).
// The p2 remaining ranks take virtual ranks v; v < r stands for blocks 2v and 2v + 1, v >= r for
// block v + r. At distance (coll/phases/recursive_halving.h) p2/2, p2/4, ..., 1 a rank sends the
// half of its current range of blocks that its partner keeps and reduces the partner's copy of the
// half it keeps; after log2(p2) steps virtual rank v holds its blocks reduced over all ranks. An
// odd rank of the first 2r then returns block 2v to its even partner. The first step reduces the
// input straight into the work buffer and the last straight into recvbuf, so no block is copied.
// Cost: log2(p2) alpha + (p2 - 1)/p2 p n (beta + gamma), plus, when r > 0,
// 2 alpha + p n (beta + gamma) + n beta for the fold and the hand-back; n = one block. Same
// bandwidth as the ring at powers of two with logarithmic latency.
// Preconditions: a commutative operation; sendbuf and recvbuf do not overlap.
// Result: block r of the reduction in recvbuf of rank r.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/math/pow2_fold.h"
#include "coll/phases/pow2_fold.h"
#include "coll/phases/recursive_halving.h"
#include "kernels/reduce_kernels.h"

namespace overpass {
namespace {

// The halving phase's view of the p blocks: virtual rank v < r stands for blocks 2v and 2v + 1,
// v >= r for block v + r. The rank's range is read from the input until the first step, after
// which its partial sums are in `work` (at the offsets of the whole vector). The first step
// receives the partner's half into `work` in place and reduces the input into it; an unfolded
// rank's last step receives into recvbuf (its one block) likewise; other steps receive into
// scratch and reduce it into `work`.
class Halving final : public HalvingPlan {
 public:
  Halving(const CollArgs& args, Team& team, const Pow2Fold& fold, unsigned char* work, bool folded)
      : args_(args),
        team_(team),
        fold_(fold),
        element_(args.bytes / args.count),
        in_(static_cast<const unsigned char*>(args.sendbuf)),
        out_(static_cast<unsigned char*>(args.recvbuf)),
        work_(work),
        cur_(folded ? work : in_),
        folded_(folded) {}
  std::size_t offset(int v) const override {
    return static_cast<std::size_t>(v < fold_.extra ? 2 * v : v + fold_.extra) * args_.bytes;
  }
  const unsigned char* source(const HalvingStep&) override { return cur_; }
  unsigned char* target(const HalvingStep& step) override {
    if (step.mask == 1 && !folded_) return out_;
    if (cur_ == in_) return work_ + step.keepOffset;
    return static_cast<unsigned char*>(team_.scratch.get(ScratchSlot::kIncoming, step.keepBytes));
  }
  void combine(const HalvingStep& step, unsigned char* received) override {
    if (received == out_ || received == work_ + step.keepOffset)
      reduce(cur_ + step.keepOffset, received, step.keepBytes);
    else
      reduce(received, work_ + step.keepOffset, step.keepBytes);
    cur_ = work_;
  }

 private:
  void reduce(const void* from, void* inout, std::size_t bytes) const {
    reduceLocal(from, inout, bytes / element_, args_.type, args_.op, args_.user);
  }
  const CollArgs& args_;
  Team& team_;
  const Pow2Fold& fold_;
  const std::size_t element_;
  const unsigned char* in_;
  unsigned char* out_;
  unsigned char* work_;
  const unsigned char* cur_;  // where the range the rank holds is: input, then work
  const bool folded_;
};

}  // namespace

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

  const Pow2Fold fold(size);
  // hands its input to rank + 1, waits for its block
  if (fold.foldedOut(rank)) return foldOut(team, tag, fold, in, total, out, n);
  // The rank's partial sums, at the offsets of the whole vector; only the range it still holds
  // is valid.
  auto* work = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPartial, total));
  if (fold.absorbs(rank)) {
    OVERPASS_CHECK(foldReceive(team, tag, fold, work, total));
    reduceLocal(in, work, total / (n / args.count), args.type, args.op, args.user);
  }

  Halving halving(args, team, fold, work, fold.absorbs(rank));
  OVERPASS_CHECK(recursiveHalving(team, tag, fold, halving));
  if (!fold.absorbs(rank)) return Status::kOk;
  // Virtual rank newRank < extra holds blocks rank - 1 and rank: hand back the first.
  return foldHandBack(team, tag, fold, work + (rank - 1) * n, n,
                      [&] { std::memcpy(out, work + rank * n, n); });
}

}  // namespace overpass
