// The intercepted collectives: each turns its MPI arguments into the one description of a call
// (shim/call.h) and hands it to dispatch (shim/dispatch.h).
#include "shim/collectives.h"

#include "shim/dispatch.h"

namespace overpass::shim {

using enum Collective;

int onAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  Call call = Call::reduction(kAllreduce, sendbuf, recvbuf, count, datatype, op, 0, comm);
  return dispatch(call);
}

int onReduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm) {
  Call call = Call::reduction(kReduce, sendbuf, recvbuf, count, datatype, op, root, comm);
  return dispatch(call);
}

int onReduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  Call call =
      Call::reduction(kReduceScatterBlock, sendbuf, recvbuf, recvcount, datatype, op, 0, comm);
  return dispatch(call);
}

int onBcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  Call call =
      Call::blocks(kBcast, nullptr, 0, MPI_DATATYPE_NULL, buffer, count, datatype, root, comm);
  return dispatch(call);
}

int onGather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Call call =
      Call::blocks(kGather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return dispatch(call);
}

int onScatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Call call = Call::blocks(kScatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
  return dispatch(call);
}

int onAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Call call =
      Call::blocks(kAllgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm);
  return dispatch(call);
}

int onAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Call call =
      Call::blocks(kAlltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm);
  return dispatch(call);
}

int onAllgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  Call call =
      Call::blocks(kAllgatherv, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0, comm);
  call.recvcounts = recvcounts;
  call.rdispls = displs;
  return dispatch(call);
}

int onAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm) {
  Call call = Call::blocks(kAlltoallv, sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0, comm);
  call.sendcounts = sendcounts;
  call.sdispls = sdispls;
  call.recvcounts = recvcounts;
  call.rdispls = rdispls;
  return dispatch(call);
}

int onGatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
              MPI_Comm comm) {
  Call call =
      Call::blocks(kGatherv, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root, comm);
  call.recvcounts = recvcounts;
  call.rdispls = displs;
  return dispatch(call);
}

int onScatterv(const void* sendbuf, const int sendcounts[], const int displs[],
               MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm) {
  Call call =
      Call::blocks(kScatterv, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root, comm);
  call.sendcounts = sendcounts;
  call.sdispls = displs;
  return dispatch(call);
}

int onReduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call call = Call::reduction(kReduceScatter, sendbuf, recvbuf, 0, datatype, op, 0, comm);
  call.recvcounts = recvcounts;
  return dispatch(call);
}

int onScan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm) {
  Call call = Call::reduction(kScan, sendbuf, recvbuf, count, datatype, op, 0, comm);
  return dispatch(call);
}

int onExscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  Call call = Call::reduction(kExscan, sendbuf, recvbuf, count, datatype, op, 0, comm);
  return dispatch(call);
}

int onBarrier(MPI_Comm comm) {
  Call call;
  call.coll = kBarrier;
  call.comm = comm;
  return dispatch(call);
}

}  // namespace overpass::shim
