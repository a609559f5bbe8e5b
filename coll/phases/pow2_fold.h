// The data steps of the non-power-of-two fold (coll/math/pow2_fold.h for the rank mapping),
// written once for recursive doubling and recursive halving: before the power-of-two steps a
// folded-out rank hands its data to its partner and waits for its result (foldOut), the partner
// receives that data (foldReceive) and combines it in its own operand order (the caller's: each
// algorithm keeps the order it always had, so its results stay bit-identical); after the steps
// the partner returns the result (foldHandBack).
//
// `whileInFlight` runs once the phase's messages are posted and before it waits for them: the
// callers copy their input into place there, so that the peer is not held up behind the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "coll/math/pow2_fold.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// Posts `ops`, runs `whileInFlight`, waits. With no operation nothing is posted, and
// `whileInFlight` still runs.
template <class F>
Status exchangeWhile(Transport& transport, std::span<const P2POp> ops, int tag, F&& whileInFlight) {
  if (ops.empty()) {
    whileInFlight();
    return Status::kOk;
  }
  Transport::Request request;
  OVERPASS_CHECK(transport.start(ops, tag, &request));
  whileInFlight();
  return transport.wait(request);
}

// On a folded-out rank: sends `data` (`bytes`) to its partner and receives its result
// (`resultBytes`) into `result`. Both are posted at once where the two ranges are disjoint; where
// they overlap (in place) the send completes before the receive is posted, as a send must not
// read what the receive writes. The rank takes no further part in the call.
inline Status foldOut(Team& team, int tag, const Pow2Fold& fold, const void* data,
                      std::size_t bytes, void* result, std::size_t resultBytes) {
  const int partner = fold.partner(team.rank());
  const auto from = reinterpret_cast<std::uintptr_t>(data);
  const auto to = reinterpret_cast<std::uintptr_t>(result);
  if (from + bytes <= to || to + resultBytes <= from) {
    const P2POp ops[2] = {P2POp::recv(result, resultBytes, partner),
                          P2POp::send(data, bytes, partner)};
    return team.transport.exchange(ops, tag);
  }
  OVERPASS_CHECK(team.transport.send(data, bytes, partner, tag));
  return team.transport.recv(result, resultBytes, partner, tag);
}

// On an absorbing rank: receives the folded-out partner's data (`bytes`) into `into`.
template <class F>
Status foldReceive(Team& team, int tag, const Pow2Fold& fold, void* into, std::size_t bytes,
                   F&& whileInFlight) {
  const P2POp op = P2POp::recv(into, bytes, fold.partner(team.rank()));
  return exchangeWhile(team.transport, {&op, 1}, tag, whileInFlight);
}
inline Status foldReceive(Team& team, int tag, const Pow2Fold& fold, void* into,
                          std::size_t bytes) {
  return foldReceive(team, tag, fold, into, bytes, [] {});
}

// On an absorbing rank, after the steps: returns the result (`bytes` at `result`) to the partner.
template <class F>
Status foldHandBack(Team& team, int tag, const Pow2Fold& fold, const void* result,
                    std::size_t bytes, F&& whileInFlight) {
  const P2POp op = P2POp::send(result, bytes, fold.partner(team.rank()));
  return exchangeWhile(team.transport, {&op, 1}, tag, whileInFlight);
}
inline Status foldHandBack(Team& team, int tag, const Pow2Fold& fold, const void* result,
                           std::size_t bytes) {
  return team.transport.send(result, bytes, fold.partner(team.rank()), tag);
}

}  // namespace overpass
