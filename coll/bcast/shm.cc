// Bcast through the node's shared memory: per chunk of up to one buffer, the root copies the
// chunk into its buffer, one round, every other rank copies it out. Only the root's arrival is
// waited for; rounds alternate buffers, so the root writes chunk k + 1 while the others still
// read chunk k.
// Cost per chunk: one round + two copies. Preconditions: the team shares one channel. Result:
// recvbuf on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status bcastShm(const CollArgs& args, Team& team) {
  if (team.size() == 1 || args.bytes == 0) return Status::kOk;
  ShmChannel& ch = *team.shm;
  auto* buf = static_cast<unsigned char*>(args.recvbuf);
  const bool isRoot = team.rank() == args.root;
  for (std::size_t off = 0; off < args.bytes; off += ch.bufferBytes()) {
    const std::size_t n = std::min(ch.bufferBytes(), args.bytes - off);
    if (isRoot) {  // publishes and goes on: nobody's data to wait for
      OVERPASS_CHECK(ch.reserve());
      std::memcpy(ch.next(n), buf + off, n);
      OVERPASS_CHECK(ch.sync(team.rank()));
    } else {  // waits for the root only
      OVERPASS_CHECK(ch.sync(args.root));
      std::memcpy(buf + off, ch.peer(args.root, n), n);
    }
  }
  return Status::kOk;
}

}  // namespace overpass
