#include "coll/phases/recursive_halving.h"

#include "coll/phases/pow2_fold.h"

namespace overpass {

Status recursiveHalving(Team& team, int tag, const Pow2Fold& fold, HalvingPlan& plan) {
  const int v = fold.virtualRank(team.rank());
  bool first = true;
  // [lo, lo + 2 mask) is the range of virtual blocks this rank still holds.
  int lo = 0;
  for (int mask = fold.p2 / 2; mask > 0; mask >>= 1) {
    HalvingStep step;
    step.mask = mask;
    step.peer = fold.realRank(v ^ mask);
    const bool upper = (v & mask) != 0;
    step.keep = upper ? lo + mask : lo;
    step.give = upper ? lo : lo + mask;
    step.keepOffset = plan.offset(step.keep);
    step.keepBytes = plan.offset(step.keep + mask) - step.keepOffset;
    step.giveOffset = plan.offset(step.give);
    step.giveBytes = plan.offset(step.give + mask) - step.giveOffset;
    unsigned char* target = plan.target(step);
    P2POp ops[2];
    std::size_t n = 0;
    if (step.keepBytes) ops[n++] = P2POp::recv(target, step.keepBytes, step.peer);
    if (step.giveBytes)
      ops[n++] = P2POp::send(plan.source(step) + step.giveOffset, step.giveBytes, step.peer);
    OVERPASS_CHECK(exchangeWhile(team.transport, {ops, n}, tag, [&] {
      if (first) plan.whileFirstInFlight();
    }));
    first = false;
    if (step.keepBytes) plan.combine(step, target);
    lo = step.keep;
  }
  return Status::kOk;
}

}  // namespace overpass
