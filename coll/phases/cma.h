// Cross-memory attach (Linux process_vm_readv / process_vm_writev) among the ranks of one node:
// a rank reads its peers' buffers, and writes into them, itself, with no copy into shared memory
// and out again. The cma algorithms (coll/allreduce/cma.cc, coll/reduce/cma.cc) are built of:
//
// - cmaOpen: one round of the node channel (shm/channel.h) in which each rank publishes the
//   addresses of its send and receive buffers (a CmaCard), every rank's handed back. At the
//   channel's first call the ranks learn whether each may read every peer's memory (the same user,
//   the same pid namespace, no ptrace restriction: each reads every peer's card from the peer's own
//   memory, where it must be the card the peer published) and agree on it in one more round; the
//   channel remembers it. Where any rank cannot, every rank declines, at every call. Writing needs
//   the same permission as reading (the kernel checks one ptrace access mode for both).
// - cmaReduceSlice: elements [first, last) of every rank's send buffer combined in rank order
//   (x0 op x1 op ... op x(p-1): the sequence of every rank-order algorithm), chunk by chunk through
//   two bounce buffers of up to 1 MiB, each chunk of the result written into a
//   rank's receive buffer: this rank's own (formed there: the last operand copied in, the rest
//   reduced into it, 256 KiB at a time), or a peer's (process_vm_writev).
//
// Between cmaOpen and the next round of the channel, every rank's published buffers are in use:
// an algorithm ends with a round after which no rank reads or writes a peer's memory any more.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/coll_args.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

// What a rank publishes in cmaOpen's round: its buffers, and where the card itself lies in its
// memory, which a peer's first read must find there. Its process is the one its channel recorded
// (ShmChannel::pid: a process id seen from another pid namespace names another process, or none).
struct CmaCard {
  std::uint64_t in, out;
  std::uint64_t self;
};

// Copies `bytes` at `remote` in process `pid` into `local` (read) or from `local` to `remote`
// (write); false on failure, errno set.
bool cmaRead(pid_t pid, void* local, std::uint64_t remote, std::size_t bytes);
bool cmaWrite(pid_t pid, std::uint64_t remote, const void* local, std::size_t bytes);

// Publishes this rank's card (args.sendbuf, args.recvbuf) in one round of team.shm and gives
// every rank's in `cards` (by rank); kDeclined where the ranks may not read each other's memory
// (every rank alike), kOk where they may. Needs team.shm.
Status cmaOpen(const CollArgs& args, Team& team, std::vector<CmaCard>& cards);

// Combines elements [first, last) of every rank's send buffer in rank order into byte
// first * element of rank `dest`'s receive buffer (this rank's own: formed in it, the last
// operand copied there and x0 op ... op x(p-2) reduced into it a piece at a time, while the piece
// is in the cache; a peer's: through process_vm_writev). The peers' operands are read from their
// send buffers. In place (args.sendbuf == args.recvbuf) the result overwrites this rank's operand
// only after reading it; where that operand is x0 and p is 2 the result is formed in a bounce
// buffer and copied in. kTransportError where reading or writing a peer's memory fails (logged).
Status cmaReduceSlice(const CollArgs& args, Team& team, const std::vector<CmaCard>& cards,
                      std::size_t first, std::size_t last, int dest);

}  // namespace overpass
