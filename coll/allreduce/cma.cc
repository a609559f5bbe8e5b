// Allreduce on the two ranks of one node by reading the peer's memory itself (Linux cross-memory
// attach, process_vm_readv): no copy into shared memory and out again.
//
// Steps: round 1 (the node channel, shm/channel.h), each rank publishes its process id and the
// addresses of its send and receive buffers. Each rank then owns half the vector (rank 0 the
// first count/2 elements): chunk by chunk it reads the peer's elements of that half into a
// buffer that stays in its cache and combines them with its own (x0 op x1) straight into its
// recvbuf. Round 2: both halves are done (and neither rank reads the other's input any more).
// Each rank reads the peer's finished half from the peer's recvbuf into its own. Round 3: the
// peer's recvbuf is read; each may return.
// Memory traffic per rank (n bytes): 1.5n read and n written, the bounce buffer in cache; the
// shm allreduce moves 2.5n and 2n (copy in, reduce, copy out), Open MPI's single-copy ring about
// 2n and 1.5n plus its temporaries.
// Preconditions: two ranks on one node sharing a channel, in which every rank may read its peer's
// memory (the same user, the same pid namespace, no ptrace restriction): learnt at the first call
// (each reads the first bytes of the peer's send buffer, which must be those the peer published)
// and agreed in one more round, remembered by the channel; where either rank cannot, both
// decline at every call. Combines in rank order (x0 op x1): bits equal to every other rank-order
// algorithm's. In place: a rank writes its result only into its own half and the peer's half
// only after round 2, when the peer no longer reads its input there.
// Result: recvbuf on both ranks.
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/shm_reduce.h"
#include "common/log.h"

namespace overpass {
namespace {

// What a rank publishes in round 1: its process, its buffers, and the first bytes of its send
// buffer, which the peer's first read must find there (a process id seen from another pid
// namespace names another process, or none).
struct Card {
  std::int64_t pid;
  std::uint64_t in, out;
  unsigned char head[8];
};

// The bounce buffer's size: in the core's cache with the operands streaming past it.
constexpr std::size_t kChunkBytes = 64 << 10;

// Copies `bytes` at `remote` in process `pid` to `local`; false on failure (errno set).
bool readPeer(pid_t pid, void* local, std::uint64_t remote, std::size_t bytes) {
  while (bytes > 0) {
    iovec to{local, bytes};
    iovec from{reinterpret_cast<void*>(remote), bytes};
    const ssize_t got = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      if (got == 0) errno = EFAULT;
      return false;
    }
    local = static_cast<unsigned char*>(local) + got;
    remote += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

Status allreduceCma(const CollArgs& args, Team& team) {
  if (team.size() != 2 || !team.shm) return Status::kDeclined;
  if (args.count == 0) return Status::kOk;
  ShmChannel& ch = *team.shm;
  if (ch.peerReads() == ShmChannel::PeerReads::kNo) return Status::kDeclined;
  const int r = team.rank(), other = 1 - r;
  const std::size_t e = args.bytes / args.count;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);

  OVERPASS_CHECK(ch.reserve());
  Card mine{static_cast<std::int64_t>(getpid()),
            reinterpret_cast<std::uint64_t>(in),
            reinterpret_cast<std::uint64_t>(out),
            {}};
  const std::size_t headBytes = std::min<std::size_t>(e, sizeof mine.head);
  std::memcpy(mine.head, in, headBytes);
  std::memcpy(ch.next(), &mine, sizeof mine);
  OVERPASS_CHECK(ch.sync());
  Card peer;
  std::memcpy(&peer, ch.peer(other), sizeof peer);
  const auto pid = static_cast<pid_t>(peer.pid);

  auto* bounce = static_cast<unsigned char*>(
      team.scratch.get(ScratchSlot::kIncoming, std::min(args.bytes, kChunkBytes)));
  if (ch.peerReads() == ShmChannel::PeerReads::kUnknown) {
    // The first call on this channel: can each rank read the other's memory? Both learn both.
    errno = 0;
    const bool can =
        readPeer(pid, bounce, peer.in, headBytes) && std::memcmp(bounce, peer.head, headBytes) == 0;
    if (!can)
      OVERPASS_DEBUG("allreduce cma: cannot read the peer's memory (%s): declined from now on",
                     errno ? std::strerror(errno) : "not the bytes it published");
    OVERPASS_CHECK(ch.reserve());
    *ch.next() = can;
    OVERPASS_CHECK(ch.sync());
    const bool both = *ch.peer(0) && *ch.peer(1);
    ch.setPeerReads(both ? ShmChannel::PeerReads::kYes : ShmChannel::PeerReads::kNo);
    if (!both) return Status::kDeclined;
  }

  const std::size_t half = args.count / 2;
  const std::size_t first = r == 0 ? 0 : half, last = r == 0 ? half : args.count;
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / e);
  for (std::size_t at = first; at < last; at += chunk) {
    const std::size_t n = std::min(chunk, last - at), offset = at * e;
    if (!readPeer(pid, bounce, peer.in + offset, n * e)) {
      OVERPASS_ERROR("allreduce cma: reading the peer's memory failed: %s", std::strerror(errno));
      return Status::kTransportError;
    }
    reducePair(args, r, in + offset, bounce, out + offset, n);
  }
  OVERPASS_CHECK(ch.sync());  // both halves done; nobody reads the inputs any more

  const std::size_t peerFirst = r == 0 ? half : 0, peerLast = r == 0 ? args.count : half;
  if (peerLast > peerFirst &&
      !readPeer(pid, out + peerFirst * e, peer.out + peerFirst * e, (peerLast - peerFirst) * e)) {
    OVERPASS_ERROR("allreduce cma: reading the peer's memory failed: %s", std::strerror(errno));
    return Status::kTransportError;
  }
  OVERPASS_CHECK(ch.sync());  // the peer's recvbuf is read
  return Status::kOk;
}

}  // namespace overpass
