#include "transport/loopback_transport.h"

#include <cstring>

namespace overpass {

void LoopbackFabric::post(int src, int dst, int tag, const void* buf, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(buf);
  std::vector<unsigned char> message(p, p + bytes);
  {
    std::lock_guard lock(mutex_);
    mailboxes_[{src, dst, tag}].push_back(std::move(message));
  }
  cv_.notify_all();
}

int LoopbackFabric::take(int src, int dst, int tag, void* buf, std::size_t bytes, bool block) {
  std::unique_lock lock(mutex_);
  auto& box = mailboxes_[{src, dst, tag}];
  if (block)
    cv_.wait(lock, [&] { return !box.empty(); });
  else if (box.empty())
    return 0;
  std::vector<unsigned char> message = std::move(box.front());
  box.pop_front();
  lock.unlock();
  if (message.size() != bytes) return -1;
  if (bytes) std::memcpy(buf, message.data(), bytes);
  return 1;
}

namespace {

struct LoopbackBatch final : Transport::Batch {
  std::vector<P2POp> recvs;  // in posting order; the first `taken` are complete
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
    else
      batch->recvs.push_back(op);
  }
  *request = std::move(batch);
  return Status::kOk;
}

Status LoopbackTransport::advance(Request& request, bool block, bool* done) {
  auto& batch = static_cast<LoopbackBatch&>(*request);
  while (batch.taken < batch.recvs.size()) {
    const P2POp& op = batch.recvs[batch.taken];
    const int got = fabric_.take(op.peer, rank_, batch.tag, op.buf, op.bytes, block);
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

Status LoopbackTransport::wait(Request& request) {
  bool done = false;
  return advance(request, true, &done);
}

}  // namespace overpass
