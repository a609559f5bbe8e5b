#include "shm/progress_board.h"

#include <sched.h>
#include <time.h>

namespace overpass {

struct ProgressBoard::Entry {
  std::atomic<std::uint64_t> version;  // odd while its owner writes the record
  std::atomic<std::int64_t> pid, heartbeatNs, sinceNs;
  std::atomic<std::uint64_t> commKey, call;
  std::atomic<std::int32_t> what, inCall;
};

std::int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::uint64_t commKey(const int* worldRanks, int size) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the size and the ranks
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 0x100000001b3ull;
  };
  mix(static_cast<std::uint64_t>(size));
  for (int i = 0; i < size; ++i) mix(static_cast<std::uint32_t>(worldRanks[i]));
  return h ? h : 1;
}

ProgressBoard::ProgressBoard(std::unique_ptr<ShmArena> arena) : arena_(std::move(arena)) {}

std::unique_ptr<ShmArena> ProgressBoard::createArena(const std::string& name, int ranks,
                                                     std::string* why) {
  // A fresh segment is zero-filled: every entry starts as "never published".
  return ShmArena::create(name, ranks, sizeof(Entry), why);
}

ProgressBoard::Entry& ProgressBoard::entry(int index) const {
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
  return *reinterpret_cast<Entry*>(arena_->buffer(index, 0));
}

void ProgressBoard::publish(int index, const BoardRecord& r) {
  // One writer per entry (its rank's watchdog thread): a plain seqlock.
  Entry& e = entry(index);
  const std::uint64_t v = e.version.load(std::memory_order_relaxed);
  e.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // odd before any field changes
  e.pid.store(r.pid, std::memory_order_relaxed);
  e.commKey.store(r.commKey, std::memory_order_relaxed);
  e.call.store(r.call, std::memory_order_relaxed);
  e.what.store(r.what, std::memory_order_relaxed);
  e.inCall.store(r.inCall, std::memory_order_relaxed);
  e.sinceNs.store(r.sinceNs, std::memory_order_relaxed);
  e.version.store(v + 2, std::memory_order_release);
}

void ProgressBoard::heartbeat(int index, std::int64_t nowNs) {
  entry(index).heartbeatNs.store(nowNs, std::memory_order_relaxed);
}

BoardRecord ProgressBoard::read(int index) const {
  const Entry& e = entry(index);
  BoardRecord r;
  // A writer stopped in the middle of its record (SIGSTOP) never finishes it: after a few tries
  // the last copy is used as it is.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::uint64_t before = e.version.load(std::memory_order_acquire);
    r.pid = e.pid.load(std::memory_order_relaxed);
    r.commKey = e.commKey.load(std::memory_order_relaxed);
    r.call = e.call.load(std::memory_order_relaxed);
    r.what = e.what.load(std::memory_order_relaxed);
    r.inCall = e.inCall.load(std::memory_order_relaxed) != 0;
    r.sinceNs = e.sinceNs.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!(before & 1) && e.version.load(std::memory_order_relaxed) == before) break;
    sched_yield();
  }
  r.heartbeatNs = e.heartbeatNs.load(std::memory_order_relaxed);
  return r;
}

PeerView judgePeer(const BoardRecord& mine, const BoardRecord& peer, bool peerAlive,
                   std::int64_t nowNs, std::int64_t staleNs) {
  if (!peerAlive) return {PeerVerdict::kExited, Blame::kDirect};
  if (peer.what == BoardRecord::kFinished)  // the cause, unless we are in the teardown too
    return {PeerVerdict::kFinished,
            mine.what == BoardRecord::kTeardown ? Blame::kNone : Blame::kDirect};
  if (peer.pid != 0 && nowNs - peer.heartbeatNs > staleNs)
    return {PeerVerdict::kNotRunning, Blame::kDirect};
  if (peer.pid == 0 || peer.what < 0) return {PeerVerdict::kNeverCalled, Blame::kDirect};
  if (mine.commKey == 0) return {PeerVerdict::kUnknown, Blame::kNone};
  const Blame blame = peer.inCall ? Blame::kIndirect : Blame::kDirect;
  if (peer.commKey != mine.commKey) return {PeerVerdict::kElsewhere, blame};
  if (peer.call < mine.call) return {PeerVerdict::kBehind, blame};
  if (peer.call > mine.call || !peer.inCall) return {PeerVerdict::kAhead, Blame::kNone};
  return {PeerVerdict::kWaitingToo, Blame::kNone};
}

}  // namespace overpass
