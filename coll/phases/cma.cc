#include "coll/phases/cma.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "kernels/reduce_kernels.h"
#include "shm/channel.h"

namespace overpass {
namespace {

static_assert(sizeof(CmaCard) <= 64, "a card in one buffer: the registry's room");

// A bounce buffer's size: each chunk costs one process_vm_readv or writev per operand, whose
// setup (pinning the peer's pages) outweighed the cache: np 2, cma reduce of 1 MiB, 102 us with
// 64 KiB chunks, 77 with 256 KiB, 68 with 1 MiB; 4 MiB chunks were slower again from 16 MiB
// (docs/PERFORMANCE.md, "Reading the peers' memory").
constexpr std::size_t kChunkBytes = 1 << 20;

// The piece in which this rank's own result is formed in its recvbuf: the last operand copied in,
// the others' combination reduced into it while it is in the cache (a core's L2 here is 1 MiB).
// np 2, allreduce of 1-16 MiB, paired, slow state (docs/PERFORMANCE.md, "The cma result in
// recvbuf"): pieces of 128 KiB 1.24-1.33x Open MPI, 256 KiB 1.21-1.46x, 512 KiB 1.23-1.42x, the
// whole 1 MiB chunk 0.98-1.39x; at np 4 256 KiB gained most too.
constexpr std::size_t kPieceBytes = std::size_t{256} << 10;

// process_vm_readv (write = false) or process_vm_writev of `bytes` between `local` and `remote`,
// resumed after a partial transfer or a signal.
bool transfer(pid_t pid, void* local, std::uint64_t remote, std::size_t bytes, bool write) {
  while (bytes > 0) {
    iovec here{local, bytes};
    iovec there{reinterpret_cast<void*>(remote), bytes};
    const ssize_t moved = write ? process_vm_writev(pid, &here, 1, &there, 1, 0)
                                : process_vm_readv(pid, &here, 1, &there, 1, 0);
    if (moved <= 0) {
      if (moved < 0 && errno == EINTR) continue;
      if (moved == 0) errno = EFAULT;
      return false;
    }
    local = static_cast<unsigned char*>(local) + moved;
    remote += static_cast<std::uint64_t>(moved);
    bytes -= static_cast<std::size_t>(moved);
  }
  return true;
}

Status failed(const char* what) {
  OVERPASS_ERROR("cma: %s the peer's memory failed: %s", what, std::strerror(errno));
  return Status::kTransportError;
}

}  // namespace

bool cmaRead(pid_t pid, void* local, std::uint64_t remote, std::size_t bytes) {
  return transfer(pid, local, remote, bytes, false);
}

bool cmaWrite(pid_t pid, std::uint64_t remote, const void* local, std::size_t bytes) {
  return transfer(pid, const_cast<void*>(local), remote, bytes, true);
}

Status cmaOpen(const CollArgs& args, Team& team, std::vector<CmaCard>& cards) {
  ShmChannel& ch = *team.shm;
  if (ch.peerReads() == ShmChannel::PeerReads::kNo) return Status::kDeclined;
  CmaCard mine{reinterpret_cast<std::uint64_t>(args.sendbuf),
               reinterpret_cast<std::uint64_t>(args.recvbuf), 0};
  mine.self = reinterpret_cast<std::uint64_t>(&mine);
  OVERPASS_CHECK(ch.reserve());
  std::memcpy(ch.next(sizeof mine), &mine, sizeof mine);
  OVERPASS_CHECK(ch.sync());
  cards.resize(static_cast<std::size_t>(ch.size()));
  for (int q = 0; q < ch.size(); ++q)
    std::memcpy(&cards[static_cast<std::size_t>(q)], ch.peer(q, sizeof mine), sizeof mine);
  if (ch.peerReads() == ShmChannel::PeerReads::kYes) return Status::kOk;

  // The channel's first call: can this rank read every peer's memory? Each reads every peer's
  // card where the peer keeps it (it lives until the round below, which the peer waits in for this
  // rank). All learn all.
  bool can = true;
  errno = 0;
  for (int q = 0; q < ch.size() && can; ++q) {
    if (q == ch.rank()) continue;
    const CmaCard& peer = cards[static_cast<std::size_t>(q)];
    CmaCard there{};
    can = cmaRead(static_cast<pid_t>(ch.pid(q)), &there, peer.self, sizeof there) &&
          std::memcmp(&there, &peer, sizeof there) == 0;
  }
  if (!can)
    OVERPASS_DEBUG("cma: cannot read a peer's memory (%s): declined from now on",
                   errno ? std::strerror(errno) : "not the card it published");
  OVERPASS_CHECK(ch.reserve());
  *ch.next(1) = can;
  OVERPASS_CHECK(ch.sync());
  bool all = true;
  for (int q = 0; q < ch.size(); ++q) all = all && *ch.peer(q, 1);
  ch.setPeerReads(all ? ShmChannel::PeerReads::kYes : ShmChannel::PeerReads::kNo);
  return all ? Status::kOk : Status::kDeclined;
}

Status cmaReduceSlice(const CollArgs& args, Team& team, const std::vector<CmaCard>& cards,
                      std::size_t first, std::size_t last, int dest) {
  if (last <= first) return Status::kOk;
  const ShmChannel& ch = *team.shm;
  const int me = ch.rank(), p = ch.size();
  const std::size_t e = args.bytes / args.count;
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / e);
  const std::size_t piece = std::max<std::size_t>(1, kPieceBytes / e);
  const std::size_t bounceBytes = std::min(chunk, last - first) * e;
  unsigned char* const bounce[2] = {
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseIncoming, bounceBytes)),
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseBlocks, bounceBytes))};
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const CmaCard& target = cards[static_cast<std::size_t>(dest)];
  for (std::size_t at = first; at < last; at += chunk) {
    const std::size_t n = std::min(chunk, last - at), offset = at * e, bytes = n * e;
    // Rank q's operand: this rank's own where it is, a peer's read into `into`.
    auto operand = [&](int q, unsigned char* into) -> const unsigned char* {
      if (q == me) return in + offset;
      const CmaCard& peer = cards[static_cast<std::size_t>(q)];
      return cmaRead(static_cast<pid_t>(ch.pid(q)), into, peer.in + offset, bytes) ? into : nullptr;
    };
    const unsigned char* left = operand(0, bounce[0]);  // x0 op ... op x(q-1)
    if (!left) return failed("reading");
    unsigned char* const home = out + offset;
    for (int q = 1; q < p; ++q) {
      if (q == p - 1 && dest == me && left != home) {
        // This rank's own result: the last operand copied into recvbuf first (a peer's read
        // there, this rank's own copied unless in place) and the others' combination reduced
        // into it, a piece at a time, while the piece is in the cache.
        const CmaCard& peer = cards[static_cast<std::size_t>(q)];
        for (std::size_t done = 0; done < n; done += piece) {
          const std::size_t k = std::min(piece, n - done), from = done * e, b = k * e;
          if (q != me &&
              !cmaRead(static_cast<pid_t>(ch.pid(q)), home + from, peer.in + offset + from, b))
            return failed("reading");
          if (q == me && in != out) std::memcpy(home + from, in + offset + from, b);
          reduceLocal(left + from, home + from, k, args.type, args.op, args.user);
        }
        left = home;
        break;
      }
      // The partial result goes into the bounce buffer that `left` is not, where rank q's operand
      // is read (reduceInto: the result may be the second operand, never the first).
      unsigned char* spare = left == bounce[0] ? bounce[1] : bounce[0];
      const unsigned char* right = operand(q, spare);
      if (!right) return failed("reading");
      reduceInto(left, right, spare, n, args.type, args.op, args.user);
      left = spare;
    }
    if (dest != me) {
      if (!cmaWrite(static_cast<pid_t>(ch.pid(dest)), target.out + offset, left, bytes))
        return failed("writing");
    } else if (left != home) {  // in place, this rank's own operand first (rank 0 of two)
      std::memcpy(home, left, bytes);
    }
  }
  return Status::kOk;
}

}  // namespace overpass
