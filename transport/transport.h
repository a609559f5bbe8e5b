// Transport: how the algorithms move bytes between the ranks of one team. An algorithm posts a
// batch of sends and receives without waiting (start), advances it (test) or completes it (wait);
// exchange = start + wait. Messages of one tag between two ranks are matched in the order they
// are posted. Implementations: PMPI point-to-point on a private communicator
// (shim/pmpi_transport.cc), in-process threads (loopback_transport.h), UCX (ucx_transport.h).
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "common/progress.h"
#include "common/status.h"

namespace overpass {

struct P2POp {
  enum class Kind { kSend, kRecv };
  Kind kind;
  void* buf;  // const for sends
  std::size_t bytes;
  int peer;  // rank in the team

  static P2POp send(const void* buf, std::size_t bytes, int peer) {
    return {Kind::kSend, const_cast<void*>(buf), bytes, peer};
  }
  static P2POp recv(void* buf, std::size_t bytes, int peer) {
    return {Kind::kRecv, buf, bytes, peer};
  }
};

class Transport {
 public:
  // A batch of operations in flight; each transport keeps its own state in a subclass.
  struct Batch {
    virtual ~Batch() = default;
  };
  using Request = std::unique_ptr<Batch>;

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Posts every operation without waiting. `tag` keeps algorithm steps apart. The buffers must
  // stay valid until the request completes. On failure nothing is left in flight.
  virtual Status start(std::span<const P2POp> ops, int tag, Request* request) = 0;
  // Advances the request without blocking; *done: every operation completed (the request is
  // then released).
  virtual Status test(Request& request, bool* done) = 0;
  // Completes every operation of the request and releases it.
  virtual Status wait(Request& request) = 0;

  // Completes the request by polling test(), idle between fruitless polls (common/progress.h:
  // inside a nonblocking collective the fiber yields; elsewhere the other outstanding
  // collectives progress, and with `yieldCore` the core is given away after kPollsBeforeYield
  // polls): for the waits that would otherwise spin.
  Status pollUntilDone(Request& request, bool yieldCore) {
    for (int polls = 0;; ++polls) {
      bool done = false;
      OVERPASS_CHECK(test(request, &done));
      if (done) return Status::kOk;
      idle(yieldCore && polls >= kPollsBeforeYield);
    }
  }

  // Completes every request still in flight (null ones are skipped), also after a failure, so
  // that an algorithm returning an error leaves nothing posted that could match a later call's
  // messages. Returns the first failure.
  Status waitAll(std::span<Request> requests) {
    Status first = Status::kOk;
    for (Request& r : requests) {
      if (!r) continue;
      const Status s = wait(r);
      if (first == Status::kOk) first = s;
    }
    return first;
  }

  // Posts every operation, then completes all of them.
  Status exchange(std::span<const P2POp> ops, int tag) {
    Request request;
    OVERPASS_CHECK(start(ops, tag, &request));
    return wait(request);
  }

  Status send(const void* buf, std::size_t bytes, int peer, int tag) {
    const P2POp op = P2POp::send(buf, bytes, peer);
    return exchange({&op, 1}, tag);
  }
  Status recv(void* buf, std::size_t bytes, int peer, int tag) {
    const P2POp op = P2POp::recv(buf, bytes, peer);
    return exchange({&op, 1}, tag);
  }
  Status sendrecv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes,
                  int src, int tag) {
    const P2POp ops[2] = {P2POp::recv(rbuf, rbytes, src), P2POp::send(sbuf, sbytes, dst)};
    return exchange(ops, tag);
  }
};

}  // namespace overpass
