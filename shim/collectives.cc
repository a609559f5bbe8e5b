// The intercepted collectives: each turns its MPI arguments into a Call for dispatch (dispatch.h):
// which arguments are valid, the call's size, its own fallback reasons, the PMPI call, and how to
// run an Overpass algorithm on contiguous bytes (staging non-contiguous data, resolving
// MPI_IN_PLACE).
#include "shim/collectives.h"

#include <climits>
#include <cstring>

#include "shim/dispatch.h"
#include "shim/staged_buffer.h"
#include "shim/type_map.h"
#include "ucx_transport/split_transport.h"

namespace overpass::shim {

int raiseError(MPI_Comm comm, int code) {
  if (comm == MPI_COMM_NULL) return code;
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

namespace {

// Staging slots of CommEngine::staging.
enum Slot { kInSlot = 0, kOutSlot = 1, kCopySlot = 2 };

// The MPI error code for a failed algorithm: the MPI library's own code when its point-to-point
// calls failed, otherwise the class that fits the status.
int errorCode(CommState& state, Status status) {
  Transport* transport = state.engine->transport.get();
  if (auto* split = dynamic_cast<SplitTransport*>(transport)) transport = &split->near();
  if (auto* pmpi = dynamic_cast<PmpiTransport*>(transport))
    if (const int rc = pmpi->takeLastError(); rc != MPI_SUCCESS) return rc;
  switch (status) {
    case Status::kNoMemory:
      return MPI_ERR_NO_MEM;
    case Status::kInvalidArgument:
      return MPI_ERR_ARG;
    case Status::kInternal:
      return MPI_ERR_INTERN;
    default:
      return MPI_ERR_OTHER;
  }
}

int runAlgorithm(CommState& state, const Algorithm& algorithm, const CollArgs& args) {
  Team team = state.team();
  const Status status = algorithm.run(args, team);
  return status == Status::kOk ? MPI_SUCCESS : errorCode(state, status);
}

}  // namespace

int runDeviceAlgorithm(CommState& state, const Algorithm& algorithm, const CollArgs& args,
                       DeviceMemory* device, bool* declined) {
  Team team = state.team();
  team.device = device;
  team.deviceScratch = &state.engine->deviceScratch;
  const Status status = algorithm.run(args, team);
  *declined = status == Status::kDeclined;
  return status == Status::kOk || *declined ? MPI_SUCCESS : errorCode(state, status);
}

namespace {

CallShape blockShape(std::size_t bytes) {
  CallShape s;
  s.bytes = s.count = bytes;
  return s;
}

int commSize(CommState& state) {
  return state.size;
}
int commRank(CommState& state) {
  return state.rank;
}

// ---- Reductions -----------------------------------------------------------------------------

// A user-defined operation, applied through the MPI library (its calling convention is the MPI
// library's business): inout = in op inout.
struct UserOpContext {
  MPI_Datatype type;
  MPI_Op op;
  MPI_Aint extent;
};

void applyUserOp(const void* in, void* inout, std::size_t count, void* ctx) {
  const auto* c = static_cast<const UserOpContext*>(ctx);
  for (std::size_t first = 0; first < count; first += INT_MAX) {
    const std::size_t n = std::min<std::size_t>(INT_MAX, count - first);
    const std::size_t offset = first * static_cast<std::size_t>(c->extent);
    PMPI_Reduce_local(static_cast<const char*>(in) + offset, static_cast<char*>(inout) + offset,
                      static_cast<int>(n), c->type, c->op);
  }
}

// What the reductions share: translating (datatype, op) and the element layout.
struct Reduction {
  MPI_Datatype mpiType;
  MPI_Op mpiOp;
  DataType type = DataType::kByte;
  ReduceOp op = ReduceOp::kSum;
  std::size_t elementBytes = 0;
  UserOpContext userContext{};
  UserReduce user{};

  bool valid() const { return mpiType != MPI_DATATYPE_NULL && mpiOp != MPI_OP_NULL; }
  // Chunks of a predefined reduction are reductions of their own (after check()).
  bool chunkable() const { return op != ReduceOp::kUser && elementBytes > 0; }

  std::optional<FallbackReason> check() {
    const auto translated = translateOp(mpiOp);
    if (!translated) return FallbackReason::kUnsupportedReduction;
    op = *translated;
    if (op != ReduceOp::kUser) {
      const auto t = reductionType(mpiType);
      if (!t || !isValidReduction(*t, op)) return FallbackReason::kUnsupportedReduction;
      type = *t;
      elementBytes = dataTypeSize(type);
      return std::nullopt;
    }
    int commutative = 0;
    PMPI_Op_commutative(mpiOp, &commutative);
    if (!commutative) return FallbackReason::kNonCommutativeOp;
    // The algorithms move whole extents: the type must span exactly its extent from offset 0.
    MPI_Aint lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
    PMPI_Type_get_extent(mpiType, &lb, &extent);
    PMPI_Type_get_true_extent(mpiType, &trueLb, &trueExtent);
    int size = 0;
    PMPI_Type_size(mpiType, &size);
    if (lb != 0 || trueLb != 0 || trueExtent != extent || extent <= 0 || size != extent)
      return FallbackReason::kDerivedTypeUserOp;  // gaps: copying whole extents would fill them
    elementBytes = static_cast<std::size_t>(extent);
    OVERPASS_DEBUG("user-defined commutative operation: applied through MPI_Reduce_local");
    userContext = {mpiType, mpiOp, extent};
    user = {applyUserOp, &userContext, true, elementBytes};
    return std::nullopt;
  }

  // Bytes and elements of one rank's contribution; `ordered` when the result depends on the
  // order of combination (floating point, user-defined operations), for deterministic mode.
  // Valid once check() has passed; before, only the bytes are.
  CallShape shape(int count) const {
    CallShape s;
    s.bytes = packedBytes(count, mpiType);
    s.count = static_cast<std::size_t>(count);
    s.ordered = isOrderSensitive(type, op);
    return s;
  }

  CollArgs args(Collective coll, std::size_t count) const {
    CollArgs a;
    a.coll = coll;
    a.count = count;
    a.bytes = count * elementBytes;
    a.type = type;
    a.op = op;
    a.user = op == ReduceOp::kUser ? &user : nullptr;
    return a;
  }
};

struct AllreduceCall {
  const void* sendbuf;
  void* recvbuf;
  int count;
  MPI_Comm comm;
  Reduction red;

  bool valid() const { return count >= 0 && red.valid(); }
  CallShape shape() const { return red.shape(count); }
  std::optional<FallbackReason> check(CommState&) { return red.check(); }
  template <class Add>
  void buffers(int, int, Add&& add) {
    if (sendbuf == MPI_IN_PLACE) return add(recvbuf, count, red.mpiType, true, true);
    add(sendbuf, count, red.mpiType, true, false);
    add(recvbuf, count, red.mpiType, false, true);
  }
  bool chunkable() const { return red.chunkable(); }
  std::size_t elementBytes() const { return red.elementBytes; }
  std::pair<const void*, void*> pipelineBuffers(int) const {
    return {sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf};
  }
  AllreduceCall slice(const void* in, void* out, std::size_t n) const {
    return {in == out ? MPI_IN_PLACE : in, out, static_cast<int>(n), comm, red};
  }
  int pmpi() const { return PMPI_Allreduce(sendbuf, recvbuf, count, red.mpiType, red.mpiOp, comm); }
  // The algorithms work on the application's buffers: extents of a predefined type.
  CollArgs deviceArgs() const {
    CollArgs args = red.args(Collective::kAllreduce, count);
    args.sendbuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    args.recvbuf = recvbuf;
    return args;
  }
  int run(CommState& state, const Algorithm& algorithm) {
    return runAlgorithm(state, algorithm, deviceArgs());
  }
};

struct ReduceCall {
  const void* sendbuf;
  void* recvbuf;
  int count;
  int root;
  MPI_Comm comm;
  Reduction red;

  bool valid() const { return count >= 0 && red.valid(); }
  CallShape shape() const { return red.shape(count); }
  std::optional<FallbackReason> check(CommState& state) {
    if (root < 0 || root >= commSize(state)) return FallbackReason::kInvalidArgument;
    return red.check();
  }
  template <class Add>
  void buffers(int rank, int, Add&& add) {
    if (rank == root && sendbuf == MPI_IN_PLACE)
      return add(recvbuf, count, red.mpiType, true, true);
    add(sendbuf, count, red.mpiType, true, false);
    if (rank == root) add(recvbuf, count, red.mpiType, false, true);
  }
  bool chunkable() const { return red.chunkable(); }
  std::size_t elementBytes() const { return red.elementBytes; }
  std::pair<const void*, void*> pipelineBuffers(int rank) const {
    if (rank != root) return {sendbuf, nullptr};
    return {sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf};
  }
  ReduceCall slice(const void* in, void* out, std::size_t n) const {
    return {in == out ? MPI_IN_PLACE : in, out, static_cast<int>(n), root, comm, red};
  }
  int pmpi() const {
    return PMPI_Reduce(sendbuf, recvbuf, count, red.mpiType, red.mpiOp, root, comm);
  }
  int run(CommState& state, const Algorithm& algorithm) {
    CollArgs args = red.args(Collective::kReduce, count);
    args.root = root;
    args.sendbuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    args.recvbuf = commRank(state) == root ? recvbuf : nullptr;
    return runAlgorithm(state, algorithm, args);
  }
};

struct ReduceScatterBlockCall {
  const void* sendbuf;
  void* recvbuf;
  int recvcount;
  MPI_Comm comm;
  Reduction red;

  bool valid() const { return recvcount >= 0 && red.valid(); }
  CallShape shape() const { return red.shape(recvcount); }
  std::optional<FallbackReason> check(CommState&) { return red.check(); }
  template <class Add>
  void buffers(int, int size, Add&& add) {
    const std::size_t all = static_cast<std::size_t>(recvcount) * size;
    if (sendbuf == MPI_IN_PLACE) return add(recvbuf, all, red.mpiType, true, true);
    add(sendbuf, all, red.mpiType, true, false);
    add(recvbuf, recvcount, red.mpiType, false, true);
  }
  int pmpi() const {
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, red.mpiType, red.mpiOp, comm);
  }
  int run(CommState& state, const Algorithm& algorithm) {
    CollArgs args = red.args(Collective::kReduceScatterBlock, recvcount);
    args.sendbuf = sendbuf;
    args.recvbuf = recvbuf;
    if (sendbuf == MPI_IN_PLACE) {  // the input is all of recvbuf; the result its first block
      const std::size_t all = args.bytes * commSize(state);
      void* copy = state.engine->staging.get(kCopySlot, all);
      if (all) std::memcpy(copy, recvbuf, all);
      args.sendbuf = copy;
    }
    return runAlgorithm(state, algorithm, args);
  }
};

// ---- Data movement --------------------------------------------------------------------------

struct BcastCall {
  void* buffer;
  int count;
  MPI_Datatype type;
  int root;
  MPI_Comm comm;

  bool valid() const { return count >= 0 && type != MPI_DATATYPE_NULL; }
  CallShape shape() const { return blockShape(packedBytes(count, type)); }
  std::optional<FallbackReason> check(CommState& state) {
    if (root < 0 || root >= commSize(state)) return FallbackReason::kInvalidArgument;
    return std::nullopt;
  }
  template <class Add>
  void buffers(int rank, int, Add&& add) {
    add(buffer, count, type, rank == root, rank != root);
  }
  int pmpi() const { return PMPI_Bcast(buffer, count, type, root, comm); }
  CollArgs deviceArgs() const {
    CollArgs args;
    args.coll = Collective::kBcast;
    args.bytes = packedBytes(count, type);
    args.root = root;
    if (denseType(type)) args.recvbuf = buffer;
    return args;
  }
  int run(CommState& state, const Algorithm& algorithm) {
    StagedBuffer data;
    if (int rc = data.init(buffer, count, type, state.engine->staging, kOutSlot); rc != MPI_SUCCESS)
      return rc;
    const bool isRoot = commRank(state) == root;
    if (isRoot)
      if (int rc = data.pack(); rc != MPI_SUCCESS) return rc;
    CollArgs args;
    args.coll = Collective::kBcast;
    args.recvbuf = data.data();
    args.bytes = data.bytes();
    args.root = root;
    if (int rc = runAlgorithm(state, algorithm, args); rc != MPI_SUCCESS) return rc;
    return isRoot ? MPI_SUCCESS : data.unpack();
  }
};

// Gather, scatter, allgather and alltoall: a block per rank on one side, one or p on the other.
struct BlockArgs {
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
};

struct GatherCall {
  BlockArgs b;
  int root;
  MPI_Comm comm;

  // Only the significant arguments are checked (in check(), which knows the rank): the root's
  // send arguments are ignored in place, the receive arguments everywhere but at the root.
  bool valid() const { return true; }
  CallShape shape() const {
    // The root's send arguments are not significant when it gathers in place.
    return blockShape(b.sendbuf == MPI_IN_PLACE ? packedBytes(b.recvcount, b.recvtype)
                                                : packedBytes(b.sendcount, b.sendtype));
  }
  std::optional<FallbackReason> check(CommState& state) {
    if (root < 0 || root >= commSize(state)) return FallbackReason::kInvalidArgument;
    const bool isRoot = commRank(state) == root;
    if ((isRoot && (b.recvtype == MPI_DATATYPE_NULL || b.recvcount < 0)) ||
        (!(isRoot && b.sendbuf == MPI_IN_PLACE) &&
         (b.sendtype == MPI_DATATYPE_NULL || b.sendcount < 0)))
      return FallbackReason::kInvalidArgument;
    return std::nullopt;
  }
  template <class Add>
  void buffers(int rank, int size, Add&& add) {
    const std::size_t all = static_cast<std::size_t>(b.recvcount) * size;
    if (rank == root && b.sendbuf == MPI_IN_PLACE)
      return add(b.recvbuf, all, b.recvtype, true, true);
    add(b.sendbuf, b.sendcount, b.sendtype, true, false);
    if (rank == root) add(b.recvbuf, all, b.recvtype, false, true);
  }
  int pmpi() const {
    return PMPI_Gather(b.sendbuf, b.sendcount, b.sendtype, b.recvbuf, b.recvcount, b.recvtype, root,
                       comm);
  }
  int run(CommState& state, const Algorithm& algorithm) {
    const int size = commSize(state), rank = commRank(state);
    CollArgs args;
    args.coll = Collective::kGather;
    args.root = root;
    StagedBuffer in, out;
    if (rank == root) {
      if (int rc = out.init(b.recvbuf, static_cast<std::size_t>(b.recvcount) * size, b.recvtype,
                            state.engine->staging, kOutSlot);
          rc != MPI_SUCCESS)
        return rc;
      args.bytes = out.bytes() / size;
      args.recvbuf = out.data();
    }
    if (b.sendbuf == MPI_IN_PLACE) {
      if (int rc = out.pack(); rc != MPI_SUCCESS) return rc;
      args.sendbuf = static_cast<char*>(out.data()) + root * args.bytes;
    } else {
      if (int rc = in.init(b.sendbuf, b.sendcount, b.sendtype, state.engine->staging, kInSlot);
          rc != MPI_SUCCESS)
        return rc;
      if (int rc = in.pack(); rc != MPI_SUCCESS) return rc;
      args.sendbuf = in.data();
      args.bytes = in.bytes();
    }
    if (int rc = runAlgorithm(state, algorithm, args); rc != MPI_SUCCESS) return rc;
    return rank == root ? out.unpack() : MPI_SUCCESS;
  }
};

struct ScatterCall {
  BlockArgs b;
  int root;
  MPI_Comm comm;

  // As for gather: the significant arguments only, checked in check().
  bool valid() const { return true; }
  CallShape shape() const {
    return blockShape(b.recvbuf == MPI_IN_PLACE ? packedBytes(b.sendcount, b.sendtype)
                                                : packedBytes(b.recvcount, b.recvtype));
  }
  std::optional<FallbackReason> check(CommState& state) {
    if (root < 0 || root >= commSize(state)) return FallbackReason::kInvalidArgument;
    const bool isRoot = commRank(state) == root;
    if ((isRoot && (b.sendtype == MPI_DATATYPE_NULL || b.sendcount < 0)) ||
        (!(isRoot && b.recvbuf == MPI_IN_PLACE) &&
         (b.recvtype == MPI_DATATYPE_NULL || b.recvcount < 0)))
      return FallbackReason::kInvalidArgument;
    return std::nullopt;
  }
  template <class Add>
  void buffers(int rank, int size, Add&& add) {
    if (rank == root)
      add(b.sendbuf, static_cast<std::size_t>(b.sendcount) * size, b.sendtype, true, false);
    add(b.recvbuf, b.recvcount, b.recvtype, false, true);  // MPI_IN_PLACE at the root: skipped
  }
  int pmpi() const {
    return PMPI_Scatter(b.sendbuf, b.sendcount, b.sendtype, b.recvbuf, b.recvcount, b.recvtype,
                        root, comm);
  }
  int run(CommState& state, const Algorithm& algorithm) {
    const int size = commSize(state), rank = commRank(state);
    CollArgs args;
    args.coll = Collective::kScatter;
    args.root = root;
    StagedBuffer in, out;
    if (rank == root) {
      if (int rc = in.init(b.sendbuf, static_cast<std::size_t>(b.sendcount) * size, b.sendtype,
                           state.engine->staging, kInSlot);
          rc != MPI_SUCCESS)
        return rc;
      if (int rc = in.pack(); rc != MPI_SUCCESS) return rc;
      args.sendbuf = in.data();
      args.bytes = in.bytes() / size;
    }
    if (b.recvbuf == MPI_IN_PLACE) {
      args.recvbuf = static_cast<char*>(in.data()) + root * args.bytes;
    } else {
      if (int rc = out.init(b.recvbuf, b.recvcount, b.recvtype, state.engine->staging, kOutSlot);
          rc != MPI_SUCCESS)
        return rc;
      args.recvbuf = out.data();
      args.bytes = out.bytes();
    }
    if (int rc = runAlgorithm(state, algorithm, args); rc != MPI_SUCCESS) return rc;
    return b.recvbuf == MPI_IN_PLACE ? MPI_SUCCESS : out.unpack();
  }
};

struct AllgatherCall {
  BlockArgs b;
  MPI_Comm comm;

  bool valid() const {
    return b.recvcount >= 0 && b.recvtype != MPI_DATATYPE_NULL &&
           (b.sendbuf == MPI_IN_PLACE || b.sendcount >= 0);
  }
  CallShape shape() const { return blockShape(packedBytes(b.recvcount, b.recvtype)); }
  std::optional<FallbackReason> check(CommState&) { return std::nullopt; }
  template <class Add>
  void buffers(int, int size, Add&& add) {
    const std::size_t all = static_cast<std::size_t>(b.recvcount) * size;
    if (b.sendbuf == MPI_IN_PLACE) return add(b.recvbuf, all, b.recvtype, true, true);
    add(b.sendbuf, b.sendcount, b.sendtype, true, false);
    add(b.recvbuf, all, b.recvtype, false, true);
  }
  int pmpi() const {
    return PMPI_Allgather(b.sendbuf, b.sendcount, b.sendtype, b.recvbuf, b.recvcount, b.recvtype,
                          comm);
  }
  int run(CommState& state, const Algorithm& algorithm) {
    const int size = commSize(state), rank = commRank(state);
    StagedBuffer in, out;
    if (int rc = out.init(b.recvbuf, static_cast<std::size_t>(b.recvcount) * size, b.recvtype,
                          state.engine->staging, kOutSlot);
        rc != MPI_SUCCESS)
      return rc;
    CollArgs args;
    args.coll = Collective::kAllgather;
    args.recvbuf = out.data();
    args.bytes = out.bytes() / size;
    if (b.sendbuf == MPI_IN_PLACE) {
      if (int rc = out.pack(); rc != MPI_SUCCESS) return rc;
      args.sendbuf = static_cast<char*>(out.data()) + rank * args.bytes;
    } else {
      if (int rc = in.init(b.sendbuf, b.sendcount, b.sendtype, state.engine->staging, kInSlot);
          rc != MPI_SUCCESS)
        return rc;
      if (int rc = in.pack(); rc != MPI_SUCCESS) return rc;
      args.sendbuf = in.data();
    }
    if (int rc = runAlgorithm(state, algorithm, args); rc != MPI_SUCCESS) return rc;
    return out.unpack();
  }
};

struct AlltoallCall {
  BlockArgs b;
  MPI_Comm comm;

  bool valid() const {
    return b.recvcount >= 0 && b.recvtype != MPI_DATATYPE_NULL &&
           (b.sendbuf == MPI_IN_PLACE || b.sendcount >= 0);
  }
  CallShape shape() const { return blockShape(packedBytes(b.recvcount, b.recvtype)); }
  std::optional<FallbackReason> check(CommState&) { return std::nullopt; }
  template <class Add>
  void buffers(int, int size, Add&& add) {
    const std::size_t all = static_cast<std::size_t>(b.recvcount) * size;
    if (b.sendbuf == MPI_IN_PLACE) return add(b.recvbuf, all, b.recvtype, true, true);
    add(b.sendbuf, static_cast<std::size_t>(b.sendcount) * size, b.sendtype, true, false);
    add(b.recvbuf, all, b.recvtype, false, true);
  }
  int pmpi() const {
    return PMPI_Alltoall(b.sendbuf, b.sendcount, b.sendtype, b.recvbuf, b.recvcount, b.recvtype,
                         comm);
  }
  CollArgs deviceArgs() const {
    CollArgs args;
    args.coll = Collective::kAlltoall;
    args.bytes = packedBytes(b.recvcount, b.recvtype);
    if (b.sendbuf != MPI_IN_PLACE && denseType(b.sendtype) && denseType(b.recvtype)) {
      args.sendbuf = b.sendbuf;
      args.recvbuf = b.recvbuf;
    }
    return args;
  }
  int run(CommState& state, const Algorithm& algorithm) {
    const int size = commSize(state);
    StagedBuffer in, out;
    if (int rc = out.init(b.recvbuf, static_cast<std::size_t>(b.recvcount) * size, b.recvtype,
                          state.engine->staging, kOutSlot);
        rc != MPI_SUCCESS)
      return rc;
    CollArgs args;
    args.coll = Collective::kAlltoall;
    args.recvbuf = out.data();
    args.bytes = out.bytes() / size;
    if (b.sendbuf == MPI_IN_PLACE) {  // the input is recvbuf itself: work from a copy
      if (int rc = out.pack(); rc != MPI_SUCCESS) return rc;
      void* copy = state.engine->staging.get(kCopySlot, out.bytes());
      if (out.bytes()) std::memcpy(copy, out.data(), out.bytes());
      args.sendbuf = copy;
    } else {
      if (int rc = in.init(b.sendbuf, static_cast<std::size_t>(b.sendcount) * size, b.sendtype,
                           state.engine->staging, kInSlot);
          rc != MPI_SUCCESS)
        return rc;
      if (int rc = in.pack(); rc != MPI_SUCCESS) return rc;
      args.sendbuf = in.data();
    }
    if (int rc = runAlgorithm(state, algorithm, args); rc != MPI_SUCCESS) return rc;
    return out.unpack();
  }
};

struct BarrierCall {
  MPI_Comm comm;

  bool valid() const { return true; }
  CallShape shape() const { return {}; }
  std::optional<FallbackReason> check(CommState&) { return std::nullopt; }
  template <class Add>
  void buffers(int, int, Add&&) {}
  int pmpi() const { return PMPI_Barrier(comm); }
  int run(CommState& state, const Algorithm& algorithm) {
    CollArgs args;
    args.coll = Collective::kBarrier;
    return runAlgorithm(state, algorithm, args);
  }
};

}  // namespace

int onAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  AllreduceCall call{sendbuf, recvbuf, count, comm, {datatype, op}};
  return dispatch(Collective::kAllreduce, comm, call);
}

int onReduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm) {
  ReduceCall call{sendbuf, recvbuf, count, root, comm, {datatype, op}};
  return dispatch(Collective::kReduce, comm, call);
}

int onReduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  ReduceScatterBlockCall call{sendbuf, recvbuf, recvcount, comm, {datatype, op}};
  return dispatch(Collective::kReduceScatterBlock, comm, call);
}

int onBcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  BcastCall call{buffer, count, datatype, root, comm};
  return dispatch(Collective::kBcast, comm, call);
}

int onGather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  GatherCall call{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, root, comm};
  return dispatch(Collective::kGather, comm, call);
}

int onScatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  ScatterCall call{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, root, comm};
  return dispatch(Collective::kScatter, comm, call);
}

int onAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  AllgatherCall call{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm};
  return dispatch(Collective::kAllgather, comm, call);
}

int onAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  AlltoallCall call{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm};
  return dispatch(Collective::kAlltoall, comm, call);
}

int onBarrier(MPI_Comm comm) {
  BarrierCall call{comm};
  return dispatch(Collective::kBarrier, comm, call);
}

}  // namespace overpass::shim
