#include "transport/loopback_transport.h"

#include <cstring>

#include "common/fiber.h"

namespace overpass {

void LoopbackFabric::post(int src, int dst, int tag, const void* buf, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(buf);
  std::vector<unsigned char> message(p, p + bytes);
  {
    std::lock_guard lock(mutex_);
    Mailbox& box = mailboxes_[{src, dst, tag}];
    box.messages.emplace(box.sent++, std::move(message));
  }
  cv_.notify_all();
}

std::uint64_t LoopbackFabric::postReceive(int src, int dst, int tag) {
  std::lock_guard lock(mutex_);
  return mailboxes_[{src, dst, tag}].posted++;
}

int LoopbackFabric::take(int src, int dst, int tag, std::uint64_t place, void* buf,
                         std::size_t bytes, bool block) {
  std::unique_lock lock(mutex_);
  Mailbox& box = mailboxes_[{src, dst, tag}];
  auto there = [&] { return box.messages.count(place) != 0; };
  if (block)
    cv_.wait(lock, there);
  else if (!there())
    return 0;
  auto node = box.messages.extract(place);
  lock.unlock();
  std::vector<unsigned char>& message = node.mapped();
  if (message.size() != bytes) return -1;
  if (bytes) std::memcpy(buf, message.data(), bytes);
  return 1;
}

namespace {

struct LoopbackBatch final : Transport::Batch {
  std::vector<P2POp> recvs;           // in posting order; the first `taken` are complete
  std::vector<std::uint64_t> places;  // each receive's place among those from its peer
  std::size_t taken = 0;
  int tag = 0;
};

}  // namespace

Status LoopbackTransport::start(std::span<const P2POp> ops, int tag, Request* request) {
  auto batch = std::make_unique<LoopbackBatch>();
  batch->tag = tag;
  for (const P2POp& op : ops) {
    if (op.kind == P2POp::Kind::kSend)
      fabric_.post(rank_, op.peer, tag, op.buf, op.bytes);
    else {
      batch->recvs.push_back(op);
      batch->places.push_back(fabric_.postReceive(op.peer, rank_, tag));
    }
  }
  *request = std::move(batch);
  return Status::kOk;
}

Status LoopbackTransport::advance(Request& request, bool block, bool* done) {
  auto& batch = static_cast<LoopbackBatch&>(*request);
  while (batch.taken < batch.recvs.size()) {
    const P2POp& op = batch.recvs[batch.taken];
    const int got =
        fabric_.take(op.peer, rank_, batch.tag, batch.places[batch.taken], op.buf, op.bytes, block);
    if (got < 0) {
      request.reset();
      return Status::kTransportError;
    }
    if (got == 0) break;
    ++batch.taken;
  }
  *done = batch.taken == batch.recvs.size();
  if (*done) request.reset();
  return Status::kOk;
}

Status LoopbackTransport::test(Request& request, bool* done) {
  return advance(request, false, done);
}

// Blocks on the fabric's condition variable; inside a fiber (common/fiber.h) polls instead, so
// that the fiber yields while it waits.
Status LoopbackTransport::wait(Request& request) {
  if (Fiber::inside()) return pollUntilDone(request, false);
  bool done = false;
  return advance(request, true, &done);
}

}  // namespace overpass
