// The pairwise schedule of the alltoall family, windowed: steps t = 1..p-1 (rank r sends to
// r + t and receives from r - t), `Steps` consecutive steps per batch, each batch posted before
// the previous one is waited for, so at most two batches are in flight. `fill(t, ops)` writes
// step t's operations (at most two: its receive and its send, none where a block is empty) and
// returns how many; `afterFirst()` runs once the first batch is posted (at once where there is
// no batch, p = 1), for work that overlaps it (the own block's copy, another exchange). Used by
// alltoall and alltoallv linear (kAlltoallLinearBatch steps) and by the hierarchical alltoallv's
// large blocks (one step). Nothing stays posted when it returns, also after a failure.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "coll/team.h"

namespace overpass {

template <int Steps, class Fill, class AfterFirst>
Status windowedExchange(Team& team, int tag, Fill fill, AfterFirst afterFirst) {
  const int size = team.size();
  std::array<P2POp, 2 * Steps> ops[2];
  Transport::Request requests[2];
  Status status = Status::kOk;
  bool first = true;
  for (int s = 1, batch = 0; s < size && status == Status::kOk; s += Steps, ++batch) {
    std::size_t count = 0;
    for (int t = s; t < std::min(s + Steps, size); ++t)
      count += fill(t, ops[batch % 2].data() + count);
    if (count)
      status = team.transport.start({ops[batch % 2].data(), count}, tag, &requests[batch % 2]);
    if (status == Status::kOk && first) status = afterFirst();
    first = false;
    if (status == Status::kOk && batch > 0 && requests[(batch - 1) % 2])
      status = team.transport.wait(requests[(batch - 1) % 2]);
  }
  if (status == Status::kOk && first) status = afterFirst();
  const Status waited = team.transport.waitAll(requests);
  return status != Status::kOk ? status : waited;
}

}  // namespace overpass
