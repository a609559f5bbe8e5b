// The intercepted collectives: each turns its MPI arguments into the one description of a call
// (shim/call.h) and hands it to dispatch (shim/dispatch.h). A blocking collective is its
// nonblocking twin without a request.
#include "shim/collectives.h"

#include "shim/dispatch.h"

namespace overpass::shim {

using enum Collective;

int onIallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  Call call = Call::reduction(kAllreduce, sendbuf, recvbuf, count, datatype, op, 0, comm);
  call.request = request;
  return dispatch(call);
}

int onAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  return onIallreduce(sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}

int onIreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              int root, MPI_Comm comm, MPI_Request* request) {
  Call call = Call::reduction(kReduce, sendbuf, recvbuf, count, datatype, op, root, comm);
  call.request = request;
  return dispatch(call);
}

int onReduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm) {
  return onIreduce(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr);
}

int onIreduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  Call call =
      Call::reduction(kReduceScatterBlock, sendbuf, recvbuf, recvcount, datatype, op, 0, comm);
  call.request = request;
  return dispatch(call);
}

int onReduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return onIreduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, nullptr);
}

int onIbcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
             MPI_Request* request) {
  Call call =
      Call::blocks(kBcast, nullptr, 0, MPI_DATATYPE_NULL, buffer, count, datatype, root, comm);
  call.request = request;
  return dispatch(call);
}

int onBcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return onIbcast(buffer, count, datatype, root, comm, nullptr);
}

int onIgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  Call call =
      Call::blocks(kGather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  call.request = request;
  return dispatch(call);
}

int onGather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return onIgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}

int onIscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
               MPI_Request* request) {
  Call call = Call::blocks(kScatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
  call.request = request;
  return dispatch(call);
}

int onScatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return onIscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    nullptr);
}

int onIallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Call call =
      Call::blocks(kAllgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm);
  call.request = request;
  return dispatch(call);
}

int onAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return onIallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}

int onIalltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Call call =
      Call::blocks(kAlltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm);
  call.request = request;
  return dispatch(call);
}

int onAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return onIalltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}

int onIallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                  MPI_Request* request) {
  Call call =
      Call::blocks(kAllgatherv, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0, comm);
  call.recvcounts = recvcounts;
  call.rdispls = displs;
  call.request = request;
  return dispatch(call);
}

int onAllgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return onIallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                       nullptr);
}

int onIalltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Call call = Call::blocks(kAlltoallv, sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0, comm);
  call.sendcounts = sendcounts;
  call.sdispls = sdispls;
  call.recvcounts = recvcounts;
  call.rdispls = rdispls;
  call.request = request;
  return dispatch(call);
}

int onAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm) {
  return onIalltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype, comm, nullptr);
}

int onIgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
               MPI_Comm comm, MPI_Request* request) {
  Call call =
      Call::blocks(kGatherv, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root, comm);
  call.recvcounts = recvcounts;
  call.rdispls = displs;
  call.request = request;
  return dispatch(call);
}

int onGatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
              MPI_Comm comm) {
  return onIgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                    nullptr);
}

int onIscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm, MPI_Request* request) {
  Call call =
      Call::blocks(kScatterv, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root, comm);
  call.sendcounts = sendcounts;
  call.sdispls = displs;
  call.request = request;
  return dispatch(call);
}

int onScatterv(const void* sendbuf, const int sendcounts[], const int displs[],
               MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm) {
  return onIscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                     comm, nullptr);
}

int onIreduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  Call call = Call::reduction(kReduceScatter, sendbuf, recvbuf, 0, datatype, op, 0, comm);
  call.recvcounts = recvcounts;
  call.request = request;
  return dispatch(call);
}

int onReduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return onIreduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr);
}

int onIscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm, MPI_Request* request) {
  Call call = Call::reduction(kScan, sendbuf, recvbuf, count, datatype, op, 0, comm);
  call.request = request;
  return dispatch(call);
}

int onScan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm) {
  return onIscan(sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}

int onIexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  Call call = Call::reduction(kExscan, sendbuf, recvbuf, count, datatype, op, 0, comm);
  call.request = request;
  return dispatch(call);
}

int onExscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  return onIexscan(sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}

int onIbarrier(MPI_Comm comm, MPI_Request* request) {
  Call call;
  call.coll = kBarrier;
  call.comm = comm;
  call.request = request;
  return dispatch(call);
}

int onBarrier(MPI_Comm comm) {
  return onIbarrier(comm, nullptr);
}

}  // namespace overpass::shim
