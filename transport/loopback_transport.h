// Loopback transport: the ranks of a team are threads of one process. Sends are buffered (copied
// into a mailbox) so they never block; receives wait for the matching message, matched in the
// order they were posted (as MPI and UCX match, whatever the order the batches are waited in).
// For unit tests of the algorithms without MPI.
#pragma once

#include <condition_variable>
#include <cstdint>
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
  // The place of a receive from src to dst with this tag, in posting order: it matches the
  // message sent in the same place.
  std::uint64_t postReceive(int src, int dst, int tag);
  // Takes the message of place `place` from src to dst with this tag into buf: 1 done, 0 not
  // there yet (only when !block), -1 its size differs.
  int take(int src, int dst, int tag, std::uint64_t place, void* buf, std::size_t bytes,
           bool block);

 private:
  struct Mailbox {
    std::uint64_t sent = 0, posted = 0;                            // messages sent, receives posted
    std::map<std::uint64_t, std::vector<unsigned char>> messages;  // by place, not yet taken
  };
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int>, Mailbox> mailboxes_;
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
