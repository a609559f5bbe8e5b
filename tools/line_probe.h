// LineProbe: the machine's state as every shared-memory path feels it, read between ranks 0 and 1
// of a run: the round trip of one cache line between their cpus (overpass-membw -l reads it
// between two threads of one process). On the virtual machines of docs/PERFORMANCE.md it changes
// within seconds (about 110 ns or 500 ns), and every shared-memory figure with it, the MPI
// library's too; overpass-bench --line-rtt reads it before and after each row, so that each row
// says which state it ran in, not only the process's start.
//
// Ranks 0 and 1 ping-pong two counters in a window of shared memory (MPI_Win_allocate_shared),
// each waiting for the other's count: a few thousand trips, at most about 2 ms. Where ranks 0
// and 1 do not share a node (or the run has one rank) there is no reading. Where ranks outnumber
// cores, a trip may wait for a time slice: the reading then says that too.
//
// Beside it, rank 0 times a kernel round trip of the kind the MPI library's single copy pays per
// message above its eager limit (process_vm_readv of 64 bytes, here from its own memory): on the
// same machines it was 2.1-3.2 us while a line's round trip read 565-965 ns (docs/PERFORMANCE.md,
// "The cores' distance, agreed"), a state the line alone does not tell apart.
#pragma once

#include <mpi.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <new>
#include <optional>

namespace overpass::tools {

class LineProbe {
 public:
  // Collective over `comm`.
  explicit LineProbe(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split(comm, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair_);
    if (pair_ == MPI_COMM_NULL) return;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(pair_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int together = 0;
    MPI_Comm_size(node, &together);
    if (together == 2) {
      rank_ = rank;
      void* mine = nullptr;
      MPI_Win_allocate_shared(rank == 0 ? 2 * kLine : 0, 1, MPI_INFO_NULL, node, &mine, &win_);
      MPI_Aint bytes = 0;
      int unit = 0;
      void* lines = nullptr;
      MPI_Win_shared_query(win_, 0, &bytes, &unit, &lines);
      auto* base = static_cast<unsigned char*>(lines);
      if (rank == 0) {
        new (base) std::atomic<long>(0);
        new (base + kLine) std::atomic<long>(0);
      }
      ping_ = reinterpret_cast<std::atomic<long>*>(base);
      pong_ = reinterpret_cast<std::atomic<long>*>(base + kLine);
      PMPI_Barrier(pair_);  // both counters are zero before either is used
    }
    MPI_Comm_free(&node);
  }
  ~LineProbe() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    if (pair_ != MPI_COMM_NULL) MPI_Comm_free(&pair_);
  }
  // Whether ranks 0 and 1 share a node (known at those two ranks; false elsewhere).
  bool ready() const { return win_ != MPI_WIN_NULL; }
  LineProbe(const LineProbe&) = delete;
  LineProbe& operator=(const LineProbe&) = delete;

  // At rank 0: a line's mean round trip and the mean kernel round trip, in ns.
  struct Reading {
    double lineNs, kernelNs;
  };

  // Collective over the `comm` of the constructor (ranks other than 0 and 1 return at once): the
  // reading at rank 0; nothing elsewhere, or where ranks 0 and 1 share no node.
  std::optional<Reading> measure() {
    if (!ready()) return std::nullopt;
    PMPI_Barrier(pair_);
    if (rank_ == 1) {  // answers each count until rank 0 posts a negative one
      for (;;) {
        long seen;
        while ((seen = ping_->load(std::memory_order_acquire)) == answered_) {
        }
        answered_ = seen;
        if (seen < 0) return std::nullopt;
        pong_->store(seen, std::memory_order_release);
      }
    }
    using Clock = std::chrono::steady_clock;
    auto trip = [&] {
      ping_->store(++count_, std::memory_order_release);
      while (pong_->load(std::memory_order_acquire) != count_) {
      }
    };
    for (int i = 0; i < kWarmUp; ++i) trip();
    const auto start = Clock::now();
    long trips = 0;
    std::chrono::duration<double, std::nano> spent{};
    while (trips < kTrips) {
      for (int i = 0; i < kCheckEvery; ++i) trip();
      trips += kCheckEvery;
      spent = Clock::now() - start;
      if (spent > kBudget) break;
    }
    ping_->store(-count_, std::memory_order_release);  // done; the next count is count_ + 1
    return Reading{spent.count() / static_cast<double>(trips), kernelRoundTripNs()};
  }

 private:
  // The mean time of a process_vm_readv of 64 bytes from this process's own memory, within about
  // 1 ms.
  static double kernelRoundTripNs() {
    unsigned char from[64] = {}, to[64];
    iovec local{to, sizeof to}, remote{from, sizeof from};
    const pid_t me = getpid();
    const auto start = std::chrono::steady_clock::now();
    std::chrono::duration<double, std::nano> spent{};
    long calls = 0;
    do {
      for (int i = 0; i < kCheckEvery; ++i) process_vm_readv(me, &local, 1, &remote, 1, 0);
      calls += kCheckEvery;
      spent = std::chrono::steady_clock::now() - start;
    } while (spent < kKernelBudget);
    return spent.count() / static_cast<double>(calls);
  }

  static constexpr int kLine = 128;  // the two counters never share a line (or its neighbour)
  static constexpr int kWarmUp = 64, kCheckEvery = 16;
  static constexpr long kTrips = 4096;
  static constexpr std::chrono::milliseconds kBudget{2}, kKernelBudget{1};

  MPI_Comm pair_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = -1;
  std::atomic<long>* ping_ = nullptr;  // written by rank 0
  std::atomic<long>* pong_ = nullptr;  // written by rank 1
  long count_ = 0;                     // rank 0: the last count posted
  long answered_ = 0;                  // rank 1: the last value of ping_ seen
};

}  // namespace overpass::tools
