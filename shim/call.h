// One description of an intercepted call: the MPI arguments as the application passed them, and
// everything derived from them that the paths of dispatch need (shim/dispatch.h): whether they are
// valid, the call's own fallback reasons, its shape for selection, the buffers significant on this
// rank (classified once per call for device memory, and staged), the MPI library's call, the
// arguments of an Overpass algorithm (packed data, MPI_IN_PLACE resolved), the arguments of a
// device algorithm (the application's own buffers) and the call on one chunk (the staging
// pipeline). The semantics of each collective (which arguments are significant on which rank,
// what in place means) are written once, in shim/call.cc.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "coll/coll_args.h"
#include "coll/select/registry.h"
#include "common/collective.h"
#include "common/datatype.h"
#include "common/fallback.h"

namespace overpass::shim {

struct CommState;

// A user-defined operation, applied through the MPI library (its calling convention is the MPI
// library's business): inout = in op inout.
struct UserOpContext {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  MPI_Aint extent = 0;
};

// A reduction's operation and element type, translated by Call::check().
struct Reduction {
  DataType type = DataType::kByte;
  ReduceOp op = ReduceOp::kSum;
  std::size_t elementBytes = 0;
  UserOpContext userContext{};
  UserReduce user{};
};

// One side of a call on this rank: `count` elements of `type` at the send or the receive buffer.
struct CallBuffer {
  enum Side : unsigned char { kSend, kRecv };
  Side side = kSend;
  std::size_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool read = false, written = false;
  // Elements before the pointer where the span starts (a vector side's negative displacement):
  // the buffer spans `count` elements from `first` extents off the pointer.
  std::ptrdiff_t first = 0;
};

// Call::run's answer where the algorithm declined (never an MPI error code, which are >= 0).
inline constexpr int kDeclinedCall = -1;

struct Call {
  Collective coll = Collective::kBarrier;
  MPI_Comm comm = MPI_COMM_NULL;
  // The two sides as passed. A reduction passes its one count and datatype on both sides (the
  // receive count of reduce_scatter_block); bcast its buffer as the receive side.
  const void* sendbuf = nullptr;
  int sendcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  void* recvbuf = nullptr;
  int recvcount = 0;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;  // reductions
  int root = 0;             // rooted collectives
  // The vector collectives' per-rank counts and displacements (in extents of the side's
  // datatype; reduce_scatter: recvcounts only), significant where the standard says; the request
  // of a nonblocking call (shim/nonblocking.h). Null elsewhere.
  const int* sendcounts = nullptr;
  const int* sdispls = nullptr;
  const int* recvcounts = nullptr;
  const int* rdispls = nullptr;
  MPI_Request* request = nullptr;
  // The copy of a nonblocking call that runs inside its operation (shim/nonblocking.h): errors
  // go to the request's status, a decline to the MPI library's nonblocking collective on
  // Overpass's communicator; `request` is not written again.
  bool inOperation = false;

  // Set by check(): this rank and the communicator's size; a reduction's translation.
  int rank = 0, size = 0;
  Reduction red;

  static Call reduction(Collective coll, const void* sendbuf, void* recvbuf, int count,
                        MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
  static Call blocks(Collective coll, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

  // Arguments the MPI library must reject that every rank can see before its rank is known (the
  // rank-dependent ones are check()'s).
  bool valid() const;
  // The call's own reasons to go to the MPI library, on this rank of `size`.
  std::optional<FallbackReason> check(int rank, int size);
  // Bytes and elements of one rank's contribution (the block of the block collectives), whether
  // the result depends on the order of combination and whether it splits into chunks (valid once
  // check() has passed; before, only the bytes are).
  CallShape shape() const;
  // Alltoallv, gatherv, scatterv (after check()): the bytes this rank receives (alltoallv, the
  // root of gatherv, scatterv off the root) or sends (gatherv off the root, scatterv's root).
  std::uint64_t ownBytes() const;
  // MPI_IN_PLACE where it is significant: on every rank, or at the root of gather and scatter.
  bool inPlace() const;
  // The buffers significant on this rank (at most two; in place, one that is read and written).
  int buffers(CallBuffer out[2]) const;
  const void* buffer(CallBuffer::Side side) const {
    return side == CallBuffer::kSend ? sendbuf : recvbuf;
  }
  void setBuffer(CallBuffer::Side side, void* p) {
    (side == CallBuffer::kSend ? const_cast<void*&>(sendbuf) : recvbuf) = p;
  }

  // The MPI library's collective, with the arguments as they stand (device buffers staged): the
  // nonblocking form where the call has a request.
  int pmpi() const;
  // The same on communicator `c`, nonblocking where `r` is not null.
  int pmpiOn(MPI_Comm c, MPI_Request* r) const;
  // An Overpass algorithm on host bytes (packed where the datatype needs it). An MPI error code,
  // or kDeclinedCall where the algorithm declined the call, alike on every rank, having changed
  // nothing the application sees.
  int run(CommState& state, const Algorithm& algorithm);
  // A device algorithm's arguments: the application's buffers, none where a datatype needs
  // packing (this rank cannot take part).
  CollArgs deviceArgs() const;
  // A nonblocking call's own copy of its arrays of counts and displacements (those significant on
  // this rank; after check()): the call then points into `store`. Programs count on it (mpi4py
  // frees the arrays it builds once the call has returned, as the MPI library copies them).
  void keepArrays(std::vector<int>* store);
  // The vector collectives' arrays significant on this rank (after check()), in the order
  // sendcounts, sdispls, recvcounts, rdispls, each of size() ints; null where not significant.
  std::array<const int*, 4> significantArrays() const;
  // The staging pipeline's view of a splittable call: this rank's input and output (null: none;
  // equal in place), and the call on `count` elements at host copies `in` and `out`.
  const void* input() const;
  void* output() const;
  Call chunk(const void* in, void* out, std::size_t count) const;
};

// The constructors, inline: each intercepted call builds its description in place.
inline Call Call::reduction(Collective coll, const void* sendbuf, void* recvbuf, int count,
                            MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  Call c;
  c.coll = coll;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.sendcount = c.recvcount = count;
  c.sendtype = c.recvtype = type;
  c.op = op;
  c.root = root;
  return c;
}

inline Call Call::blocks(Collective coll, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm) {
  Call c;
  c.coll = coll;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcount = recvcount;
  c.recvtype = recvtype;
  c.root = root;
  return c;
}

}  // namespace overpass::shim
