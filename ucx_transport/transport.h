// Transport: how the algorithms move bytes between the ranks of one team. An algorithm posts a
// batch of sends and receives and waits for all of them (exchange); batches of one communicator
// are matched in the order they are posted, per peer. Implementations: PMPI point-to-point on a
// private communicator (shim/pmpi_transport.cc), in-process threads (loopback_transport.h), and
// UCX (to come).
#pragma once

#include <cstddef>
#include <span>

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
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Posts every operation, then completes all of them. `tag` keeps algorithm steps apart.
  virtual Status exchange(std::span<const P2POp> ops, int tag) = 0;

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
