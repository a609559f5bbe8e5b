// Scan and exscan along the chain of ranks: rank r receives the prefix x0 op ... op x(r-1) from
// r - 1, combines its own input on the right and passes the new prefix to r + 1. Every prefix is
// the left fold in rank order, ((x0 op x1) op x2) ...: the bits of every rank-order algorithm
// (deterministic mode), and any operation, commutative or not. A prefix that fits a post goes
// through the node's post boxes where the team has them (shm/channel.h: a sender returns at
// once, as after an inline send; np 4, 16-64 B after a barrier 0.97-1.05x Open MPI, 0.81-0.98x
// through the MPI library's point to point), else through the team's transport.
// Cost: (p - 1) (alpha + n beta + n gamma) on the critical path.
// Preconditions: none (in place: sendbuf == recvbuf).
// Result: scan: x0 op ... op xr at recvbuf of rank r; exscan: x0 op ... op x(r-1), rank 0's
// recvbuf untouched.
#include <cstring>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {
namespace {

Status prefixChain(const CollArgs& args, Team& team, bool inclusive) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const bool posts = fitsPosts(args, team);  // every rank alike: the same bytes, the same team
  auto send = [&](const void* data, int to) {
    return posts ? team.shm->post(to, data, n) : team.transport.send(data, n, to, tag);
  };
  auto recv = [&](void* data, int from) {
    return posts ? team.shm->take(from, data, n) : team.transport.recv(data, n, from, tag);
  };
  if (rank == 0) {
    if (inclusive && args.recvbuf != args.sendbuf) std::memcpy(args.recvbuf, args.sendbuf, n);
    return size > 1 ? send(args.sendbuf, 1) : Status::kOk;
  }
  // Exscan's result is the prefix received: straight into recvbuf unless that still holds x_r
  // (in place), which the next prefix needs (not on the last rank).
  const bool last = rank == size - 1;
  const bool direct = !inclusive && (last || args.sendbuf != args.recvbuf);
  auto* before = direct ? static_cast<unsigned char*>(args.recvbuf)
                        : static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, n));
  OVERPASS_CHECK(recv(before, rank - 1));
  if (!inclusive && last) return Status::kOk;
  // The new prefix, before x_r is overwritten in place: in recvbuf for scan, else in scratch.
  auto* prefix = inclusive
                     ? static_cast<unsigned char*>(args.recvbuf)
                     : static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPartial, n));
  reduceInto(before, args.sendbuf, prefix, args.count, args.type, args.op, args.user);
  if (!inclusive && !direct) std::memcpy(args.recvbuf, before, n);
  return last ? Status::kOk : send(prefix, rank + 1);
}

}  // namespace

Status scanLinear(const CollArgs& args, Team& team) {
  return prefixChain(args, team, true);
}

Status exscanLinear(const CollArgs& args, Team& team) {
  return prefixChain(args, team, false);
}

}  // namespace overpass
