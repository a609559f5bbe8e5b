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

#include "transport/transport.h"

namespace overpass {

class LoopbackFabric {
 public:
  explicit LoopbackFabric(int size) : size_(size) {}
  int size() const { return size_; }

  void post(int src, int dst, int tag, const void* buf, std::size_t bytes);
  // Takes the oldest message from src to dst with this tag into buf: 1 done, 0 none there yet
  // (only when !block), -1 its size differs.
  int take(int src, int dst, int tag, void* buf, std::size_t bytes, bool block);

 private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<unsigned char>>> mailboxes_;
};

// Sends are delivered at start; a batch holds the receives still to take.
class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(LoopbackFabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return fabric_.size(); }
  Status start(std::span<const P2POp> ops, int tag, Request* request) override;
  Status test(Request& request, bool* done) override;
  Status wait(Request& request) override;

 private:
  Status advance(Request& request, bool block, bool* done);

  LoopbackFabric& fabric_;
  int rank_;
};

}  // namespace overpass
