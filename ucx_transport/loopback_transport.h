// Loopback transport: the ranks of a team are threads of one process. Sends are buffered (copied
// into a mailbox) so they never block; receives wait for the matching message. For unit tests of
// the algorithms without MPI.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "ucx_transport/transport.h"

namespace overpass {

class LoopbackFabric {
 public:
  explicit LoopbackFabric(int size) : size_(size) {}
  int size() const { return size_; }

  void post(int src, int dst, int tag, const void* buf, std::size_t bytes);
  // Waits for the oldest message from src to dst with this tag; false if its size differs.
  bool take(int src, int dst, int tag, void* buf, std::size_t bytes);

 private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<unsigned char>>> mailboxes_;
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(LoopbackFabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return fabric_.size(); }
  Status exchange(std::span<const P2POp> ops, int tag) override;

 private:
  LoopbackFabric& fabric_;
  int rank_;
};

}  // namespace overpass
