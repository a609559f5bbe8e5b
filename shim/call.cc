// The semantics of each intercepted collective, written once (shim/call.h): significant arguments,
// MPI_IN_PLACE, the buffers of each rank, the MPI library's call, the arguments of an algorithm.
#include "shim/call.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "shim/comm_state.h"
#include "shim/dispatch.h"
#include "shim/staged_buffer.h"
#include "shim/type_map.h"

namespace overpass::shim {
namespace {

using enum Collective;

bool isRooted(Collective c) {
  return c == kBcast || c == kReduce || c == kGather || c == kScatter || c == kGatherv ||
         c == kScatterv;
}
// The elements, counted from the buffer's pointer in extents of the side's datatype, that the
// blocks of a vector side span: [first, end), first <= 0 where a displacement is negative.
struct Span {
  std::ptrdiff_t first = 0, end = 0;
};
Span blockSpan(const int* counts, const int* displs, int size) {
  Span s;
  bool any = false;
  for (int q = 0; q < size; ++q) {
    if (counts[q] == 0) continue;
    const std::ptrdiff_t from = displs[q], to = from + counts[q];
    s.first = any ? std::min(s.first, from) : from;
    s.end = any ? std::max(s.end, to) : to;
    any = true;
  }
  s.first = std::min<std::ptrdiff_t>(s.first, 0);
  s.end = std::max<std::ptrdiff_t>(s.end, 0);
  return s;
}
bool nonNegative(const int* counts, int size) {
  for (int q = 0; q < size; ++q)
    if (counts[q] < 0) return false;
  return true;
}
std::size_t total(const int* counts, int size) {
  std::size_t n = 0;
  for (int q = 0; q < size; ++q) n += static_cast<std::size_t>(counts[q]);
  return n;
}
// Blocks on each side of a block collective (p = size): the root's p blocks of scatter, ...
std::size_t sendBlocks(Collective c, int size) {
  return c == kScatter || c == kAlltoall || c == kReduceScatterBlock
             ? static_cast<std::size_t>(size)
             : 1;
}
std::size_t recvBlocks(Collective c, int size) {
  return c == kGather || c == kAllgather || c == kAlltoall ? static_cast<std::size_t>(size) : 1;
}

void applyUserOp(const void* in, void* inout, std::size_t count, void* ctx) {
  const auto* c = static_cast<const UserOpContext*>(ctx);
  for (std::size_t first = 0; first < count; first += INT_MAX) {
    const std::size_t n = std::min<std::size_t>(INT_MAX, count - first);
    const std::size_t offset = first * static_cast<std::size_t>(c->extent);
    PMPI_Reduce_local(static_cast<const char*>(in) + offset, static_cast<char*>(inout) + offset,
                      static_cast<int>(n), c->type, c->op);
  }
}

// The translation of a reduction's (datatype, op), or the reason it goes to the MPI library.
// Scan and Exscan serve non-commutative operations (`inOrder`: their algorithms combine in rank
// order by definition).
std::optional<FallbackReason> translate(MPI_Datatype mpiType, MPI_Op mpiOp, bool inOrder,
                                        Reduction* red) {
  const auto op = translateOp(mpiOp);
  if (!op) return FallbackReason::kUnsupportedReduction;
  red->op = *op;
  if (red->op != ReduceOp::kUser) {
    const auto t = reductionType(mpiType);
    if (!t || !isValidReduction(*t, red->op)) return FallbackReason::kUnsupportedReduction;
    red->type = *t;
    red->elementBytes = dataTypeSize(red->type);
    return std::nullopt;
  }
  int commutative = 0;
  PMPI_Op_commutative(mpiOp, &commutative);
  if (!commutative && !inOrder) return FallbackReason::kNonCommutativeOp;
  // The algorithms move whole extents: the type must span exactly its extent from offset 0.
  MPI_Aint lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  PMPI_Type_get_extent(mpiType, &lb, &extent);
  PMPI_Type_get_true_extent(mpiType, &trueLb, &trueExtent);
  int size = 0;
  PMPI_Type_size(mpiType, &size);
  if (lb != 0 || trueLb != 0 || trueExtent != extent || extent <= 0 || size != extent)
    return FallbackReason::kDerivedTypeUserOp;  // gaps: copying whole extents would fill them
  red->elementBytes = static_cast<std::size_t>(extent);
  OVERPASS_DEBUG("user-defined operation: applied through MPI_Reduce_local");
  red->userContext = {mpiType, mpiOp, extent};
  red->user = {applyUserOp, nullptr, commutative != 0, red->elementBytes};
  return std::nullopt;
}

int runAlgorithm(CommState& state, const Algorithm& algorithm, const CollArgs& args) {
  Team team = state.team();
  const Status status = algorithm.run(args, team);
  if (status == Status::kDeclined) return kDeclinedCall;
  return status == Status::kOk ? MPI_SUCCESS : errorCode(state, status);
}

}  // namespace

bool Call::valid() const {
  switch (coll) {
    case kAllreduce:
    case kReduce:
    case kReduceScatterBlock:
    case kScan:
    case kExscan:
      return recvcount >= 0 && recvtype != MPI_DATATYPE_NULL && op != MPI_OP_NULL;
    case kBcast:
      return recvcount >= 0 && recvtype != MPI_DATATYPE_NULL;
    case kReduceScatter:
      return recvcounts && recvtype != MPI_DATATYPE_NULL && op != MPI_OP_NULL;
    case kAllgather:
    case kAlltoall:
      return recvcount >= 0 && recvtype != MPI_DATATYPE_NULL &&
             (sendbuf == MPI_IN_PLACE || sendcount >= 0);
    case kAllgatherv:
      return recvcounts && rdispls && recvtype != MPI_DATATYPE_NULL &&
             (sendbuf == MPI_IN_PLACE || (sendcount >= 0 && sendtype != MPI_DATATYPE_NULL));
    case kAlltoallv:
      return recvcounts && rdispls && recvtype != MPI_DATATYPE_NULL &&
             (sendbuf == MPI_IN_PLACE || (sendcounts && sdispls && sendtype != MPI_DATATYPE_NULL));
    default:  // gather(v), scatter(v): what is significant depends on the rank (check())
      return true;
  }
}

std::uint64_t Call::ownBytes() const {
  const bool isRoot = rank == root;
  switch (coll) {
    case kAlltoallv:
      return total(recvcounts, size) * packedBytes(1, recvtype);
    case kGatherv:
      if (isRoot) return total(recvcounts, size) * packedBytes(1, recvtype);
      return packedBytes(sendcount, sendtype);
    case kScatterv:
      if (isRoot) return total(sendcounts, size) * packedBytes(1, sendtype);
      return packedBytes(recvcount, recvtype);
    default:
      return 0;
  }
}

bool Call::inPlace() const {
  switch (coll) {
    case kGather:
    case kGatherv:
    case kReduce:
      return rank == root && sendbuf == MPI_IN_PLACE;
    case kScatter:
    case kScatterv:
      return rank == root && recvbuf == MPI_IN_PLACE;
    case kBcast:
    case kBarrier:
      return false;
    default:
      return sendbuf == MPI_IN_PLACE;
  }
}

std::optional<FallbackReason> Call::check(int r, int p) {
  rank = r;
  size = p;
  if (isRooted(coll) && (root < 0 || root >= size)) return FallbackReason::kInvalidArgument;
  // Gather and scatter: only the significant arguments (the root's send side of gather in place
  // and its receive side of scatter in place are not; the other side only at the root).
  const bool isRoot = rank == root;
  if ((coll == kGather && ((isRoot && (recvtype == MPI_DATATYPE_NULL || recvcount < 0)) ||
                           (!inPlace() && (sendtype == MPI_DATATYPE_NULL || sendcount < 0)))) ||
      (coll == kScatter && ((isRoot && (sendtype == MPI_DATATYPE_NULL || sendcount < 0)) ||
                            (!inPlace() && (recvtype == MPI_DATATYPE_NULL || recvcount < 0)))))
    return FallbackReason::kInvalidArgument;
  // The vector collectives' counts where significant (non-negative), and their single sides.
  const bool in = inPlace();
  bool ok = true;
  switch (coll) {
    case kAllgatherv:
    case kReduceScatter:
      ok = nonNegative(recvcounts, size);
      break;
    case kAlltoallv:
      ok = nonNegative(recvcounts, size) && (in || nonNegative(sendcounts, size));
      break;
    case kGatherv:
      ok = (!isRoot || (recvcounts && rdispls && recvtype != MPI_DATATYPE_NULL &&
                        nonNegative(recvcounts, size))) &&
           (in || (sendcount >= 0 && sendtype != MPI_DATATYPE_NULL));
      break;
    case kScatterv:
      ok = (!isRoot || (sendcounts && sdispls && sendtype != MPI_DATATYPE_NULL &&
                        nonNegative(sendcounts, size))) &&
           (in || (recvcount >= 0 && recvtype != MPI_DATATYPE_NULL));
      break;
    default:
      break;
  }
  if (!ok) return FallbackReason::kInvalidArgument;
  if (isReduction(coll)) return translate(recvtype, op, coll == kScan || coll == kExscan, &red);
  return std::nullopt;
}

CallShape Call::shape() const {
  CallShape s;
  switch (coll) {
    case kScan:
    case kExscan:
      s.bytes = packedBytes(recvcount, recvtype);
      s.count = static_cast<std::size_t>(recvcount);
      s.ordered = isOrderSensitive(red.type, red.op);
      return s;
    case kReduceScatter:  // the mean block (the counts are the same on every rank)
      if (size <= 0 || !recvcounts) return s;  // check() has not run: a global fallback
      s.count = total(recvcounts, size) / static_cast<std::size_t>(size);
      s.bytes = s.count * static_cast<std::size_t>(packedBytes(1, recvtype));
      s.ordered = isOrderSensitive(red.type, red.op);
      return s;
    case kAllgatherv:  // the mean block: every rank knows every count (in bytes)
      if (size <= 0 || !recvcounts) return s;
      s.bytes = total(recvcounts, size) * packedBytes(1, recvtype) / static_cast<std::size_t>(size);
      s.count = s.bytes;
      return s;
    case kAlltoallv:  // no size every rank knows: rules by size do not apply
    case kGatherv:
    case kScatterv:
      return s;
    case kAllreduce:
    case kReduce:
    case kReduceScatterBlock:
      s.bytes = packedBytes(recvcount, recvtype);
      s.count = static_cast<std::size_t>(recvcount);
      s.ordered = isOrderSensitive(red.type, red.op);
      s.splittable =
          coll != kReduceScatterBlock && red.op != ReduceOp::kUser && red.elementBytes > 0;
      return s;
    case kGather:  // the root's send side is not significant when it gathers in place
      s.bytes = sendbuf == MPI_IN_PLACE ? packedBytes(recvcount, recvtype)
                                        : packedBytes(sendcount, sendtype);
      break;
    case kScatter:
      s.bytes = recvbuf == MPI_IN_PLACE ? packedBytes(sendcount, sendtype)
                                        : packedBytes(recvcount, recvtype);
      break;
    case kBarrier:
      break;
    default:
      s.bytes = packedBytes(recvcount, recvtype);
      break;
  }
  s.count = s.bytes;
  return s;
}

namespace {

// A side of `count` elements, or the span of a vector side's blocks.
CallBuffer side(CallBuffer::Side which, std::size_t count, MPI_Datatype type, bool read,
                bool written) {
  return {which, count, type, read, written};
}
CallBuffer side(CallBuffer::Side which, const int* counts, const int* displs, int size,
                MPI_Datatype type, bool read, bool written) {
  const Span s = blockSpan(counts, displs, size);
  CallBuffer b = side(which, static_cast<std::size_t>(s.end - s.first), type, read, written);
  b.first = s.first;
  return b;
}

// Call::buffers of the vector collectives and the scans.
int vectorBuffers(const Call& c, CallBuffer out[2]) {
  using enum CallBuffer::Side;
  const bool isRoot = c.rank == c.root, in = c.inPlace();
  const auto sendcount = static_cast<std::size_t>(c.sendcount);
  const auto recvcount = static_cast<std::size_t>(c.recvcount);
  int n = 0;
  switch (c.coll) {
    case kAllgatherv:
      if (!in) out[n++] = side(kSend, sendcount, c.sendtype, true, false);
      out[n++] = side(kRecv, c.recvcounts, c.rdispls, c.size, c.recvtype, in, true);
      return n;
    case kAlltoallv:
      if (!in) out[n++] = side(kSend, c.sendcounts, c.sdispls, c.size, c.sendtype, true, false);
      out[n++] = side(kRecv, c.recvcounts, c.rdispls, c.size, c.recvtype, in, true);
      return n;
    case kGatherv:
      if (!in) out[n++] = side(kSend, sendcount, c.sendtype, true, false);
      if (isRoot) out[n++] = side(kRecv, c.recvcounts, c.rdispls, c.size, c.recvtype, in, true);
      return n;
    case kScatterv:
      if (isRoot) out[n++] = side(kSend, c.sendcounts, c.sdispls, c.size, c.sendtype, true, false);
      if (!in) out[n++] = side(kRecv, recvcount, c.recvtype, false, true);
      return n;
    case kReduceScatter: {  // in place, the input is the whole receive buffer
      const std::size_t all = total(c.recvcounts, c.size);
      if (in) {
        out[n++] = side(kRecv, all, c.recvtype, true, true);
      } else {
        out[n++] = side(kSend, all, c.recvtype, true, false);
        out[n++] =
            side(kRecv, static_cast<std::size_t>(c.recvcounts[c.rank]), c.recvtype, false, true);
      }
      return n;
    }
    default: {  // scan, exscan; exscan never writes rank 0's receive buffer
      const bool written = c.coll == kScan || c.rank > 0;
      if (in) {
        out[n++] = side(kRecv, recvcount, c.recvtype, true, written);
      } else {
        out[n++] = side(kSend, recvcount, c.recvtype, true, false);
        if (written) out[n++] = side(kRecv, recvcount, c.recvtype, false, true);
      }
      return n;
    }
  }
}

}  // namespace

int Call::buffers(CallBuffer out[2]) const {
  if (isVector(coll) || coll == kScan || coll == kExscan) return vectorBuffers(*this, out);
  const bool isRoot = rank == root;
  const std::size_t sendAll = static_cast<std::size_t>(sendcount) * sendBlocks(coll, size);
  std::size_t recvAll = static_cast<std::size_t>(recvcount) * recvBlocks(coll, size);
  bool sends = true, receives = true;
  switch (coll) {
    case kBarrier:
      return 0;
    case kBcast:  // one buffer: the root's is read, the others' written
      out[0] = {CallBuffer::kRecv, recvAll, recvtype, isRoot, !isRoot};
      return 1;
    case kReduce:
    case kGather:
      receives = isRoot;
      break;
    case kScatter:
      sends = isRoot;
      break;
    case kReduceScatterBlock:  // in place, the input is the whole receive buffer
      if (inPlace()) recvAll *= static_cast<std::size_t>(size);
      break;
    default:
      break;
  }
  int n = 0;
  if (inPlace()) {  // one buffer, read and written (scatter's root only reads its send buffer)
    if (coll == kScatter)
      out[n++] = {CallBuffer::kSend, sendAll, sendtype, true, false};
    else
      out[n++] = {CallBuffer::kRecv, recvAll, recvtype, true, true};
    return n;
  }
  if (sends) out[n++] = {CallBuffer::kSend, sendAll, sendtype, true, false};
  if (receives) out[n++] = {CallBuffer::kRecv, recvAll, recvtype, false, true};
  return n;
}

int Call::pmpi() const {
  return pmpiOn(comm, request);
}

int Call::pmpiOn(MPI_Comm c, MPI_Request* r) const {
  // The blocking call, or with a request its nonblocking form.
#define OVERPASS_PMPI(Name, IName, ...) r ? PMPI_##IName(__VA_ARGS__, r) : PMPI_##Name(__VA_ARGS__)
  switch (coll) {
    case kAllreduce:
      return OVERPASS_PMPI(Allreduce, Iallreduce, sendbuf, recvbuf, recvcount, recvtype, op, c);
    case kReduce:
      return OVERPASS_PMPI(Reduce, Ireduce, sendbuf, recvbuf, recvcount, recvtype, op, root, c);
    case kReduceScatterBlock:
      return OVERPASS_PMPI(Reduce_scatter_block, Ireduce_scatter_block, sendbuf, recvbuf, recvcount,
                           recvtype, op, c);
    case kBcast:
      return OVERPASS_PMPI(Bcast, Ibcast, recvbuf, recvcount, recvtype, root, c);
    case kGather:
      return OVERPASS_PMPI(Gather, Igather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, root, c);
    case kScatter:
      return OVERPASS_PMPI(Scatter, Iscatter, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, root, c);
    case kAllgather:
      return OVERPASS_PMPI(Allgather, Iallgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, c);
    case kAlltoall:
      return OVERPASS_PMPI(Alltoall, Ialltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, c);
    case kAllgatherv:
      return OVERPASS_PMPI(Allgatherv, Iallgatherv, sendbuf, sendcount, sendtype, recvbuf,
                           recvcounts, rdispls, recvtype, c);
    case kAlltoallv:
      return OVERPASS_PMPI(Alltoallv, Ialltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                           recvcounts, rdispls, recvtype, c);
    case kGatherv:
      return OVERPASS_PMPI(Gatherv, Igatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                           rdispls, recvtype, root, c);
    case kScatterv:
      return OVERPASS_PMPI(Scatterv, Iscatterv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                           recvcount, recvtype, root, c);
    case kReduceScatter:
      return OVERPASS_PMPI(Reduce_scatter, Ireduce_scatter, sendbuf, recvbuf, recvcounts, recvtype,
                           op, c);
    case kScan:
      return OVERPASS_PMPI(Scan, Iscan, sendbuf, recvbuf, recvcount, recvtype, op, c);
    case kExscan:
      return OVERPASS_PMPI(Exscan, Iexscan, sendbuf, recvbuf, recvcount, recvtype, op, c);
    case kBarrier:
    default:
      return r ? PMPI_Ibarrier(c, r) : PMPI_Barrier(c);
  }
#undef OVERPASS_PMPI
}

std::array<const int*, 4> Call::significantArrays() const {
  const bool isRoot = rank == root;
  switch (coll) {
    case kAllgatherv:
      return {nullptr, nullptr, recvcounts, rdispls};
    case kAlltoallv:  // in place, the send side is not significant
      return {sendbuf != MPI_IN_PLACE ? sendcounts : nullptr,
              sendbuf != MPI_IN_PLACE ? sdispls : nullptr, recvcounts, rdispls};
    case kGatherv:
      return {nullptr, nullptr, isRoot ? recvcounts : nullptr, isRoot ? rdispls : nullptr};
    case kScatterv:
      return {isRoot ? sendcounts : nullptr, isRoot ? sdispls : nullptr, nullptr, nullptr};
    case kReduceScatter:
      return {nullptr, nullptr, recvcounts, nullptr};
    default:
      return {nullptr, nullptr, nullptr, nullptr};
  }
}

void Call::keepArrays(std::vector<int>* store) {
  if (!isVector(coll)) return;
  const auto p = static_cast<std::size_t>(size);
  const std::array<const int*, 4> given = significantArrays();
  const int** arrays[4] = {&sendcounts, &sdispls, &recvcounts, &rdispls};
  store->clear();
  store->reserve(4 * p);  // no reallocation below: the pointers into it stay valid
  for (int i = 0; i < 4; ++i) {
    *arrays[i] = given[i] ? store->data() + store->size() : nullptr;
    if (given[i]) store->insert(store->end(), given[i], given[i] + p);
  }
}

const void* Call::input() const {
  return inPlace() ? recvbuf : sendbuf;
}
void* Call::output() const {
  return coll != kReduce || rank == root ? recvbuf : nullptr;
}

Call Call::chunk(const void* in, void* out, std::size_t count) const {
  Call c = *this;
  c.sendbuf = inPlace() ? MPI_IN_PLACE : in;  // the chunk of an in-place call is in place
  c.recvbuf = out;
  c.sendcount = c.recvcount = static_cast<int>(count);
  return c;
}

CollArgs Call::deviceArgs() const {
  CollArgs a;
  a.coll = coll;
  a.root = root;
  switch (coll) {
    case kAllreduce:  // predefined types only: extents of the type, no packing
      a.count = static_cast<std::size_t>(recvcount);
      a.bytes = a.count * red.elementBytes;
      a.type = red.type;
      a.op = red.op;
      a.sendbuf = input();
      a.recvbuf = recvbuf;
      break;
    case kBcast:
      a.bytes = packedBytes(recvcount, recvtype);
      if (denseType(recvtype)) a.recvbuf = recvbuf;
      break;
    case kAlltoall:
      a.bytes = packedBytes(recvcount, recvtype);
      if (!inPlace() && denseType(sendtype) && denseType(recvtype)) {
        a.sendbuf = sendbuf;
        a.recvbuf = recvbuf;
      }
      break;
    default:
      break;
  }
  return a;
}

namespace {

// Reduce_scatter: the blocks of the input vector back to back, rank q's at the sum of the counts
// before it; in place the input is a copy of the whole receive buffer, the result its start.
int runReduceScatter(Call& c, CommState& state, const Algorithm& algorithm) {
  const auto p = static_cast<std::size_t>(c.size);
  std::vector<std::size_t> bytes(p);
  std::vector<std::ptrdiff_t> offset(p);
  std::size_t all = 0;
  for (std::size_t q = 0; q < p; ++q) {
    bytes[q] = static_cast<std::size_t>(c.recvcounts[q]) * c.red.elementBytes;
    offset[q] = static_cast<std::ptrdiff_t>(all);
    all += bytes[q];
  }
  CollArgs a;
  a.coll = kReduceScatter;
  a.count = all / std::max<std::size_t>(c.red.elementBytes, 1);
  a.bytes = all;
  a.type = c.red.type;
  a.op = c.red.op;
  c.red.user.ctx = &c.red.userContext;
  a.user = c.red.op == ReduceOp::kUser ? &c.red.user : nullptr;
  a.recvBlocks = {bytes.data(), offset.data()};
  a.sendbuf = c.sendbuf;
  a.recvbuf = c.recvbuf;
  if (c.inPlace()) {
    void* copy = state.engine->staging.get(StagingSlot::kCopy, all);
    if (all) std::memcpy(copy, c.recvbuf, all);
    a.sendbuf = copy;
  }
  return runAlgorithm(state, algorithm, a);
}

// Allgatherv, alltoallv, gatherv, scatterv: each vector side as blocks (StagedBlocks: the
// application's buffer where the datatype is dense, else packed), each single side as a
// contiguous view; in place resolved into the own block of the vector side (alltoallv: the input
// is a copy of the receive buffer); the receive side unpacked after the algorithm.
int runVector(Call& c, CommState& state, const Algorithm& algorithm) {
  using enum StagingSlot;
  Staging& staging = state.engine->staging;
  const bool in = c.inPlace(), isRoot = c.rank == c.root;
  StagedBlocks sends, recvs;
  StagedBuffer single;
  bool unpackRecvs = false, unpackSingle = false;
  CollArgs a;
  a.coll = c.coll;
  a.root = c.root;
  int rc = MPI_SUCCESS;
  auto ok = [&](int code) { return (rc = code) == MPI_SUCCESS; };
  switch (c.coll) {
    case kAllgatherv:
    case kGatherv: {
      const bool gathers = c.coll == kAllgatherv || isRoot;
      if (gathers) {
        if (!ok(recvs.init(c.recvbuf, c.recvcounts, c.rdispls, c.size, c.recvtype, staging, kOut)))
          return rc;
        a.recvbuf = recvs.data();
        a.recvBlocks = recvs.layout();
        unpackRecvs = true;
      }
      if (in) {  // this rank's block is already in place
        if (!ok(recvs.pack(c.rank))) return rc;
        a.sendbuf = recvs.block(c.rank);
        a.bytes = recvs.bytes(c.rank);
      } else {
        if (!ok(single.init(c.sendbuf, static_cast<std::size_t>(c.sendcount), c.sendtype, staging,
                            kIn)) ||
            !ok(single.pack()))
          return rc;
        a.sendbuf = single.data();
        a.bytes = single.bytes();
      }
      break;
    }
    case kScatterv:
      if (isRoot) {
        if (!ok(sends.init(c.sendbuf, c.sendcounts, c.sdispls, c.size, c.sendtype, staging, kIn)) ||
            !ok(sends.packAll()))
          return rc;
        a.sendbuf = sends.data();
        a.sendBlocks = sends.layout();
      }
      if (in) {  // the root keeps its own block where it is
        a.recvbuf = sends.block(c.rank);
        a.bytes = sends.bytes(c.rank);
      } else {
        if (!ok(single.init(c.recvbuf, static_cast<std::size_t>(c.recvcount), c.recvtype, staging,
                            kOut)))
          return rc;
        a.recvbuf = single.data();
        a.bytes = single.bytes();
        unpackSingle = true;
      }
      break;
    default:  // alltoallv
      if (!ok(recvs.init(c.recvbuf, c.recvcounts, c.rdispls, c.size, c.recvtype, staging, kOut)))
        return rc;
      if (in ? !ok(sends.init(c.recvbuf, c.recvcounts, c.rdispls, c.size, c.recvtype, staging,
                              kCopy, true))
             : !ok(sends.init(c.sendbuf, c.sendcounts, c.sdispls, c.size, c.sendtype, staging,
                              kIn)))
        return rc;
      if (!ok(sends.packAll())) return rc;
      a.sendbuf = sends.data();
      a.sendBlocks = sends.layout();
      a.recvbuf = recvs.data();
      a.recvBlocks = recvs.layout();
      unpackRecvs = true;
      break;
  }
  if (!ok(runAlgorithm(state, algorithm, a))) return rc;
  if (unpackSingle) return single.unpack();
  if (!unpackRecvs) return MPI_SUCCESS;
  for (int q = 0; q < c.size; ++q)
    if (!(in && q == c.rank && c.coll != kAlltoallv) && !ok(recvs.unpack(q))) return rc;
  return MPI_SUCCESS;
}

// The reductions work on the application's buffers (extents of a predefined type, or of a
// user-defined operation's contiguous type); reduce_scatter(_block) in place from a copy.
int runReduction(Call& c, CommState& state, const Algorithm& algorithm) {
  if (c.coll == kReduceScatter) return runReduceScatter(c, state, algorithm);
  CollArgs a;
  a.coll = c.coll;
  a.count = static_cast<std::size_t>(c.recvcount);
  a.bytes = a.count * c.red.elementBytes;
  a.type = c.red.type;
  a.op = c.red.op;
  c.red.user.ctx = &c.red.userContext;
  a.user = c.red.op == ReduceOp::kUser ? &c.red.user : nullptr;
  a.root = c.root;
  a.sendbuf = c.input();
  a.recvbuf = c.output();
  if (c.coll == kReduceScatterBlock && c.inPlace()) {  // input: all of recvbuf; result: block 0
    const std::size_t all = a.bytes * static_cast<std::size_t>(c.size);
    void* copy = state.engine->staging.get(StagingSlot::kCopy, all);
    if (all) std::memcpy(copy, c.recvbuf, all);
    a.sendbuf = copy;
  }
  return runAlgorithm(state, algorithm, a);
}

int runBcast(Call& c, CommState& state, const Algorithm& algorithm) {
  StagedBuffer data;
  if (int rc =
          data.init(c.recvbuf, c.recvcount, c.recvtype, state.engine->staging, StagingSlot::kOut);
      rc != MPI_SUCCESS)
    return rc;
  const bool isRoot = c.rank == c.root;
  if (isRoot)
    if (int rc = data.pack(); rc != MPI_SUCCESS) return rc;
  CollArgs a;
  a.coll = kBcast;
  a.recvbuf = data.data();
  a.bytes = data.bytes();
  a.root = c.root;
  if (int rc = runAlgorithm(state, algorithm, a); rc != MPI_SUCCESS) return rc;
  return isRoot ? MPI_SUCCESS : data.unpack();
}

// Gather, scatter, allgather, alltoall: each significant side packed into a contiguous view (the
// application's buffer itself where the datatype is dense), in place resolved into a block of
// the other side, the receive side unpacked after the algorithm.
int runBlocks(Call& c, CommState& state, const Algorithm& algorithm) {
  CallBuffer bufs[2];
  const int n = c.buffers(bufs);
  StagedBuffer in, out;
  bool hasIn = false, hasOut = false;
  for (int i = 0; i < n; ++i) {
    const CallBuffer& b = bufs[i];
    StagedBuffer& view = b.side == CallBuffer::kSend ? in : out;
    (b.side == CallBuffer::kSend ? hasIn : hasOut) = true;
    if (int rc = view.init(c.buffer(b.side), b.count, b.type, state.engine->staging,
                           b.side == CallBuffer::kSend ? StagingSlot::kIn : StagingSlot::kOut);
        rc != MPI_SUCCESS)
      return rc;
    if (b.read)
      if (int rc = view.pack(); rc != MPI_SUCCESS) return rc;
  }
  CollArgs a;
  a.coll = c.coll;
  a.root = c.root;
  a.bytes =
      hasOut ? out.bytes() / recvBlocks(c.coll, c.size) : in.bytes() / sendBlocks(c.coll, c.size);
  a.sendbuf = in.data();
  a.recvbuf = out.data();
  if (c.inPlace()) {
    switch (c.coll) {
      case kScatter:  // the root keeps its own block where it is
        a.recvbuf = static_cast<char*>(in.data()) + static_cast<std::size_t>(c.root) * a.bytes;
        break;
      case kAlltoall: {  // the input is the receive buffer itself: work from a copy
        void* copy = state.engine->staging.get(StagingSlot::kCopy, out.bytes());
        if (out.bytes()) std::memcpy(copy, out.data(), out.bytes());
        a.sendbuf = copy;
        break;
      }
      default:  // gather at the root, allgather: this rank's block is already in place
        a.sendbuf = static_cast<char*>(out.data()) + static_cast<std::size_t>(c.rank) * a.bytes;
        break;
    }
  }
  if (int rc = runAlgorithm(state, algorithm, a); rc != MPI_SUCCESS) return rc;
  return hasOut ? out.unpack() : MPI_SUCCESS;
}

}  // namespace

int Call::run(CommState& state, const Algorithm& algorithm) {
  switch (coll) {
    case kAllreduce:
    case kReduce:
    case kReduceScatterBlock:
    case kReduceScatter:
    case kScan:
    case kExscan:
      return runReduction(*this, state, algorithm);
    case kAllgatherv:
    case kAlltoallv:
    case kGatherv:
    case kScatterv:
      return runVector(*this, state, algorithm);
    case kBcast:
      return runBcast(*this, state, algorithm);
    case kBarrier: {
      CollArgs a;
      a.coll = kBarrier;
      return runAlgorithm(state, algorithm, a);
    }
    default:
      return runBlocks(*this, state, algorithm);
  }
}

}  // namespace overpass::shim
