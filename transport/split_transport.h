// SplitTransport: one team over two transports, each message routed by its peer and its size.
// Messages to and from the `far` peers (ranks on other hosts) smaller than `farBelow` bytes go
// over the far transport; every other message over the near one. Both ends route a message
// alike (the peer relation is symmetric, and a receive names the size of its send), and each
// transport keeps the order of its own messages, so messages still match in the order they are
// posted. Serves OVERPASS_TRANSPORT=auto across hosts: UCX for small inter-host messages, the MPI
// library's point-to-point for the rest (docs/PERFORMANCE.md, "Transport decision").
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace overpass {

class SplitTransport final : public Transport {
 public:
  // `farPeers[i]`: team rank i is on another host. Both transports serve the same team.
  // `crowded`: ranks outnumber this host's cores (a wait on both gives the core away).
  SplitTransport(std::unique_ptr<Transport> near, std::unique_ptr<Transport> far,
                 std::vector<bool> farPeers, std::size_t farBelow, bool crowded)
      : near_(std::move(near)),
        far_(std::move(far)),
        farPeers_(std::move(farPeers)),
        farBelow_(farBelow),
        crowded_(crowded) {}

  int rank() const override { return near_->rank(); }
  int size() const override { return near_->size(); }
  Transport& near() { return *near_; }
  Transport& far() { return *far_; }
  std::size_t farBelow() const { return farBelow_; }

  bool routesFar(const P2POp& op) const { return farPeers_[op.peer] && op.bytes < farBelow_; }

  Status start(std::span<const P2POp> ops, int tag, Request* request) override {
    std::vector<P2POp> nearOps, farOps;
    for (const P2POp& op : ops) (routesFar(op) ? farOps : nearOps).push_back(op);
    auto batch = std::make_unique<SplitBatch>();
    if (!nearOps.empty()) OVERPASS_CHECK(near_->start(nearOps, tag, &batch->parts[0]));
    if (!farOps.empty()) {
      if (const Status s = far_->start(farOps, tag, &batch->parts[1]); s != Status::kOk) {
        (void)near_->waitAll({&batch->parts[0], 1});  // nothing left in flight
        return s;
      }
    }
    *request = std::move(batch);
    return Status::kOk;
  }

  Status test(Request& request, bool* done) override {
    auto& b = static_cast<SplitBatch&>(*request);
    Transport* owners[2] = {near_.get(), far_.get()};
    *done = true;
    for (int i = 0; i < 2; ++i) {
      if (!b.parts[i]) continue;
      bool partDone = false;
      if (const Status s = owners[i]->test(b.parts[i], &partDone); s != Status::kOk) {
        (void)owners[1 - i]->waitAll({&b.parts[1 - i], 1});
        request.reset();
        return s;
      }
      *done = *done && partDone;
    }
    if (*done) request.reset();
    return Status::kOk;
  }

  // With messages on both transports, polls both in turn: blocking in one would leave the other
  // unprogressed, and its peer waiting for bytes this rank still holds.
  Status wait(Request& request) override {
    auto& b = static_cast<SplitBatch&>(*request);
    if (!b.parts[0] || !b.parts[1]) {  // one transport, or none (no operations)
      const Status s = b.parts[0]   ? near_->wait(b.parts[0])
                       : b.parts[1] ? far_->wait(b.parts[1])
                                    : Status::kOk;
      request.reset();
      return s;
    }
    return pollUntilDone(request, crowded_);
  }

 private:
  struct SplitBatch final : Batch {
    Request parts[2];  // near, far (null: no operation there)
  };

  std::unique_ptr<Transport> near_, far_;
  std::vector<bool> farPeers_;
  std::size_t farBelow_;
  bool crowded_;
};

}  // namespace overpass
