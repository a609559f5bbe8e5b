// The UCX transport between real processes, under mpirun (no preload: this program drives the
// transport directly, with MPI only as the bootstrap).
//   transport_test check   every pair of ranks exchanges messages of 0 B to 64 MiB both ways;
//                          every byte is checked. Run with UCX_TLS=tcp, posix,cma and default.
//   transport_test bench   ping-pong between ranks 0 and 1: latency and bandwidth of the UCX
//                          transport and of the MPI library's own send/recv, interleaved.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "shim/pmpi_transport.h"
#include "transport/ucx/ucx_transport.h"

using namespace overpass;

namespace {

std::uint8_t pattern(int src, int dst, std::size_t size, std::size_t i) {
  return static_cast<std::uint8_t>((i * 131 + size * 7 + src * 31 + dst * 17) >> 3);
}

int check(UcxTransport& t) {
  const int rank = t.rank(), size = t.size();
  const std::size_t sizes[] = {0, 1, 7, 4096, 65539, 1 << 20, 16 << 20, 64 << 20};
  std::vector<std::uint8_t> out(64 << 20), in(64 << 20);
  long bad = 0, exchanges = 0, failed = 0;
  for (std::size_t n : sizes) {
    for (int a = 0; a < size; ++a) {
      for (int b = a + 1; b < size; ++b) {
        if (rank != a && rank != b) continue;
        const int peer = rank == a ? b : a;
        for (std::size_t i = 0; i < n; ++i) out[i] = pattern(rank, peer, n, i);
        std::fill(in.begin(), in.begin() + std::min<std::size_t>(n + 1, in.size()), 0xEE);
        const long before = bad;
        // Alternately the blocking exchange and start + test polling.
        const P2POp ops[2] = {P2POp::recv(in.data(), n, peer), P2POp::send(out.data(), n, peer)};
        if (exchanges % 2 == 0) {
          if (t.exchange(ops, 1) != Status::kOk) ++bad;
        } else {
          Transport::Request request;
          bool done = false;
          Status st = t.start(ops, 1, &request);
          while (st == Status::kOk && !done) st = t.test(request, &done);
          if (st != Status::kOk) ++bad;
        }
        for (std::size_t i = 0; i < n; ++i) bad += in[i] != pattern(peer, rank, n, i);
        if (n < in.size() && in[n] != 0xEE) ++bad;  // nothing past the message
        ++exchanges;
        failed += bad != before;
      }
    }
  }
  long totals[3] = {bad, exchanges, failed}, sums[3];
  PMPI_Allreduce(totals, sums, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("transport_test: %ld wrong bytes; %ld passed, %ld failed\n", sums[0],
                sums[1] - sums[2], sums[2]);
  return sums[0] ? 1 : 0;
}

int bench(UcxTransport& t) {
  if (t.size() < 2) return 0;
  const int rank = t.rank();
  std::vector<char> buf(16 << 20);
  if (rank == 0)
    std::printf(
        "# ping-pong ranks 0-1, median of 5 interleaved rounds\n"
        "# %10s %14s %14s %12s %12s\n",
        "bytes", "ucx us", "mpi us", "ucx GB/s", "mpi GB/s");
  for (std::size_t n = 1; n <= buf.size(); n *= 4) {
    const int iters = n <= 65536 ? 200 : 20;
    std::vector<double> ucx, mpi;
    for (int round = 0; round < 5; ++round) {
      for (int which = 0; which < 2; ++which) {
        PMPI_Barrier(MPI_COMM_WORLD);
        const double start = PMPI_Wtime();
        for (int i = 0; i < iters && rank < 2; ++i) {
          if (which == 0) {
            if (rank == 0) {
              t.send(buf.data(), n, 1, 2);
              t.recv(buf.data(), n, 1, 2);
            } else {
              t.recv(buf.data(), n, 0, 2);
              t.send(buf.data(), n, 0, 2);
            }
          } else if (rank == 0) {
            PMPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, 1, 2, MPI_COMM_WORLD);
            PMPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, 1, 2, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
          } else {
            PMPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, 0, 2, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
            PMPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, 0, 2, MPI_COMM_WORLD);
          }
        }
        const double oneWay = (PMPI_Wtime() - start) / iters / 2 * 1e6;
        (which == 0 ? ucx : mpi).push_back(oneWay);
      }
    }
    std::sort(ucx.begin(), ucx.end());
    std::sort(mpi.begin(), mpi.end());
    if (rank == 0)
      std::printf("  %10zu %14.2f %14.2f %12.3f %12.3f\n", n, ucx[2], mpi[2], n / ucx[2] / 1e3,
                  n / mpi[2] / 1e3);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  PMPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "check";
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm world;
  PMPI_Comm_dup(MPI_COMM_WORLD, &world);
  shim::PmpiBootstrap bootstrap(world);
  UcxOptions options;
  options.oversubscribed = size > 2;
  options.sameHost.assign(size, true);
  std::string error;
  auto context = UcxContext::create(options, bootstrap, &error);
  if (!context) {
    std::fprintf(stderr, "transport_test: %s\n", error.c_str());
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<int> ranks(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  if (rank == 0 && size > 1)
    std::printf("# path to rank 1: %s\n", context->describePath(1).c_str());
  int rc;
  {
    UcxTransport transport(*context, ranks, rank, 1, "world");
    rc = mode == "bench" ? bench(transport) : check(transport);
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  context.reset();
  PMPI_Comm_free(&world);
  PMPI_Finalize();
  return rc;
}
