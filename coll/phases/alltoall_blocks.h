// The prologue every alltoall algorithm shares (coll/alltoall/): the blocks of sendbuf and
// recvbuf (p blocks of args.bytes each, block i of sendbuf for rank i, block i of recvbuf from
// rank i), the rank's own block, which never travels and is copied once, at the moment each
// algorithm finds cheapest (while its first messages are in flight, or last), and the call that
// moves nothing (0-byte blocks), where no algorithm touches a buffer.
// Preconditions of every alltoall: sendbuf and recvbuf do not overlap (the shim resolves
// MPI_IN_PLACE into a copy).
#pragma once

#include <cstddef>
#include <cstring>

#include "coll/coll_args.h"
#include "coll/team.h"

namespace overpass {

class AlltoallBlocks {
 public:
  AlltoallBlocks(const CollArgs& args, const Team& team)
      : rank(team.rank()),
        size(team.size()),
        tag(static_cast<int>(args.coll)),
        n(args.bytes),
        in_(static_cast<const unsigned char*>(args.sendbuf)),
        out_(static_cast<unsigned char*>(args.recvbuf)) {}

  const int rank, size, tag;
  const std::size_t n;  // bytes per block

  // Nothing to move: the algorithm returns at once.
  bool empty() const { return n == 0; }
  const unsigned char* send(int i) const { return in_ + static_cast<std::size_t>(i) * n; }
  unsigned char* recv(int i) const { return out_ + static_cast<std::size_t>(i) * n; }
  // The own block into place, once however often it is called.
  void copyOwn() {
    if (ownCopied_) return;
    std::memcpy(recv(rank), send(rank), n);
    ownCopied_ = true;
  }

 private:
  const unsigned char* in_;
  unsigned char* out_;
  bool ownCopied_ = false;
};

}  // namespace overpass
