#include "ucx_transport/loopback_transport.h"

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

bool LoopbackFabric::take(int src, int dst, int tag, void* buf, std::size_t bytes) {
  std::unique_lock lock(mutex_);
  auto& box = mailboxes_[{src, dst, tag}];
  cv_.wait(lock, [&] { return !box.empty(); });
  std::vector<unsigned char> message = std::move(box.front());
  box.pop_front();
  lock.unlock();
  if (message.size() != bytes) return false;
  if (bytes) std::memcpy(buf, message.data(), bytes);
  return true;
}

Status LoopbackTransport::exchange(std::span<const P2POp> ops, int tag) {
  for (const P2POp& op : ops)
    if (op.kind == P2POp::Kind::kSend) fabric_.post(rank_, op.peer, tag, op.buf, op.bytes);
  for (const P2POp& op : ops)
    if (op.kind == P2POp::Kind::kRecv && !fabric_.take(op.peer, rank_, tag, op.buf, op.bytes))
      return Status::kTransportError;
  return Status::kOk;
}

}  // namespace overpass
