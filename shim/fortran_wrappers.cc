// The Fortran entry points. Open MPI's Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) call
// PMPI_* directly, so a C-only shim never sees Fortran programs: Overpass defines the Fortran
// names itself (mpi_x, mpi_x_, mpi_x__, MPI_X and mpi_x_f08_, all generated from
// shim/intercepted.def), converts handles with the f2c functions, translates the Fortran sentinels
// MPI_IN_PLACE and MPI_BOTTOM, and accepts an omitted ierror (null, in mpi_f08). It never defines
// Open MPI's internal ompi_x_f, which is the same function as pmpi_x_.
#include <dlfcn.h>
#include <mpi.h>

#include "shim/collectives.h"
#include "shim/runtime.h"

namespace {

using overpass::shim::runtime;

// The addresses of the Fortran sentinels, one per name-mangling convention.
struct FortranSentinels {
  void* inPlace[4] = {};
  void* bottom[4] = {};

  FortranSentinels() {
    const char* inPlaceNames[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                   "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    const char* bottomNames[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                  "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    for (int i = 0; i < 4; ++i) {
      inPlace[i] = dlsym(RTLD_DEFAULT, inPlaceNames[i]);
      bottom[i] = dlsym(RTLD_DEFAULT, bottomNames[i]);
    }
  }
};

const void* buffer(const void* p) {
  static const FortranSentinels sentinels;
  if (p == nullptr) return p;
  for (int i = 0; i < 4; ++i) {
    if (p == sentinels.inPlace[i]) return MPI_IN_PLACE;
    if (p == sentinels.bottom[i]) return MPI_BOTTOM;
  }
  return p;
}
void* buffer(void* p) {
  return const_cast<void*>(buffer(static_cast<const void*>(p)));
}

void setError(MPI_Fint* ierror, int rc) {
  if (ierror) *ierror = static_cast<MPI_Fint>(rc);
}

bool foreign() {
  return runtime().phase.load() == overpass::shim::Phase::kForeignMpi;
}

// Under another MPI library, hand the call to that library's own Fortran binding.
#define OVERPASS_FORWARD_IF_FOREIGN(lower, ...)                                               \
  if (foreign()) {                                                                            \
    static const auto next =                                                                  \
        reinterpret_cast<decltype(&overpass_f_##lower)>(dlsym(RTLD_NEXT, "mpi_" #lower "_")); \
    if (next) next(__VA_ARGS__);                                                              \
    return;                                                                                   \
  }

}  // namespace

extern "C" {

void overpass_f_allreduce(const void* sendbuf, void* recvbuf, const MPI_Fint* count,
                          const MPI_Fint* datatype, const MPI_Fint* op, const MPI_Fint* comm,
                          MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(allreduce, sendbuf, recvbuf, count, datatype, op, comm, ierror)
  setError(ierror, overpass::shim::onAllreduce(buffer(sendbuf), buffer(recvbuf), *count,
                                               PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                                               PMPI_Comm_f2c(*comm)));
}

void overpass_f_bcast(void* buf, const MPI_Fint* count, const MPI_Fint* datatype,
                      const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(bcast, buf, count, datatype, root, comm, ierror)
  setError(ierror, overpass::shim::onBcast(buffer(buf), *count, PMPI_Type_f2c(*datatype), *root,
                                           PMPI_Comm_f2c(*comm)));
}

void overpass_f_scatter(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                        void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                        const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              root, comm, ierror)
  setError(ierror, overpass::shim::onScatter(buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype),
                                             buffer(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                                             *root, PMPI_Comm_f2c(*comm)));
}

void overpass_f_gather(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                       void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                       const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              root, comm, ierror)
  setError(ierror, overpass::shim::onGather(buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype),
                                            buffer(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                                            *root, PMPI_Comm_f2c(*comm)));
}

void overpass_f_alltoall(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                         void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                         const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm, ierror)
  setError(ierror, overpass::shim::onAlltoall(buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype),
                                              buffer(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                                              PMPI_Comm_f2c(*comm)));
}

void overpass_f_reduce(const void* sendbuf, void* recvbuf, const MPI_Fint* count,
                       const MPI_Fint* datatype, const MPI_Fint* op, const MPI_Fint* root,
                       const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(reduce, sendbuf, recvbuf, count, datatype, op, root, comm, ierror)
  setError(ierror, overpass::shim::onReduce(buffer(sendbuf), buffer(recvbuf), *count,
                                            PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), *root,
                                            PMPI_Comm_f2c(*comm)));
}

void overpass_f_allgather(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                          void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                          const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm, ierror)
  setError(ierror, overpass::shim::onAllgather(
                       buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), buffer(recvbuf),
                       *recvcount, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm)));
}

void overpass_f_reduce_scatter_block(const void* sendbuf, void* recvbuf, const MPI_Fint* recvcount,
                                     const MPI_Fint* datatype, const MPI_Fint* op,
                                     const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(reduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op, comm,
                              ierror)
  setError(ierror, overpass::shim::onReduce_scatter_block(buffer(sendbuf), buffer(recvbuf),
                                                          *recvcount, PMPI_Type_f2c(*datatype),
                                                          PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm)));
}

void overpass_f_barrier(const MPI_Fint* comm, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(barrier, comm, ierror)
  setError(ierror, overpass::shim::onBarrier(PMPI_Comm_f2c(*comm)));
}

// Life cycle: Open MPI's mpi_init_ calls PMPI_Init itself, so Fortran programs need these to
// start Overpass.
void overpass_f_init(MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(init, ierror)
  const int rc = PMPI_Init(nullptr, nullptr);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    overpass::shim::initializeRuntime(provided);
  }
  setError(ierror, rc);
}

void overpass_f_init_thread(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(init_thread, required, provided, ierror)
  int cProvided = MPI_THREAD_SINGLE;
  const int rc = PMPI_Init_thread(nullptr, nullptr, *required, &cProvided);
  *provided = static_cast<MPI_Fint>(cProvided);
  if (rc == MPI_SUCCESS) overpass::shim::initializeRuntime(cProvided);
  setError(ierror, rc);
}

#define OVERPASS_FORTRAN_NAMES(lower, UPPER)                                             \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower        \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower##_     \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower##__    \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) MPI_##UPPER        \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower##_f08_ \
      __attribute__((alias("overpass_f_" #lower)));

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, params, args) \
  OVERPASS_FORTRAN_NAMES(lower, UPPER)
#define OVERPASS_LIFECYCLE(Name, lower, UPPER) OVERPASS_FORTRAN_NAMES(lower, UPPER)
#include "shim/intercepted.def"

}  // extern "C"
