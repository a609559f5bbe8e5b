// The host's progress board (shm/progress_board.h): records round-trip between writers and
// readers, and a waiting rank's verdict on each kind of peer is the one the report relies on.
#include "shm/progress_board.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace overpass {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kStale = kSecond / 2;

BoardRecord inCall(std::uint64_t key, std::uint64_t call, std::int64_t heartbeat = 10 * kSecond) {
  BoardRecord r;
  r.pid = 42;
  r.heartbeatNs = heartbeat;
  r.commKey = key;
  r.call = call;
  r.what = 0;
  r.inCall = true;
  r.sinceNs = 9 * kSecond;
  return r;
}

BoardRecord returned(std::uint64_t key, std::uint64_t call) {
  BoardRecord r = inCall(key, call);
  r.inCall = false;
  return r;
}

PeerView judge(const BoardRecord& peer, bool alive = true) {
  return judgePeer(inCall(7, 5), peer, alive, 10 * kSecond, kStale);
}

TEST(ProgressBoard, PeersInTheSameCallOrPastItAreNotBlamed) {
  EXPECT_EQ(judge(inCall(7, 5)).verdict, PeerVerdict::kWaitingToo);
  EXPECT_EQ(judge(inCall(7, 5)).blame, Blame::kNone);
  EXPECT_EQ(judge(returned(7, 5)).verdict, PeerVerdict::kAhead);  // a root that returned
  EXPECT_EQ(judge(inCall(7, 6)).verdict, PeerVerdict::kAhead);
  EXPECT_EQ(judge(inCall(7, 6)).blame, Blame::kNone);
}

TEST(ProgressBoard, APeerThatHasNotArrivedIsBlamedDirectly) {
  EXPECT_EQ(judge(returned(7, 4)).verdict, PeerVerdict::kBehind);
  EXPECT_EQ(judge(returned(7, 4)).blame, Blame::kDirect);
  EXPECT_EQ(judge(returned(8, 30)).verdict, PeerVerdict::kElsewhere);
  EXPECT_EQ(judge(returned(8, 30)).blame, Blame::kDirect);
  EXPECT_EQ(judge(BoardRecord{}).verdict, PeerVerdict::kNeverCalled);
  BoardRecord attached;  // on the board, no call yet
  attached.pid = 42;
  attached.heartbeatNs = 10 * kSecond;
  EXPECT_EQ(judge(attached).verdict, PeerVerdict::kNeverCalled);
  EXPECT_EQ(judge(attached).blame, Blame::kDirect);
}

TEST(ProgressBoard, APeerStuckInAnotherCallIsBlamedIndirectly) {
  EXPECT_EQ(judge(inCall(7, 4)).verdict, PeerVerdict::kBehind);
  EXPECT_EQ(judge(inCall(7, 4)).blame, Blame::kIndirect);
  EXPECT_EQ(judge(inCall(8, 1)).verdict, PeerVerdict::kElsewhere);
  EXPECT_EQ(judge(inCall(8, 1)).blame, Blame::kIndirect);
}

TEST(ProgressBoard, StoppedAndExitedPeersAreBlamedWhateverTheirLastCall) {
  const BoardRecord stopped = inCall(7, 5, 10 * kSecond - kStale - 1);  // in our very call
  EXPECT_EQ(judge(stopped).verdict, PeerVerdict::kNotRunning);
  EXPECT_EQ(judge(stopped).blame, Blame::kDirect);
  EXPECT_EQ(judge(inCall(7, 5), false).verdict, PeerVerdict::kExited);
  EXPECT_EQ(judge(inCall(7, 5, 10 * kSecond - kStale + 1)).verdict, PeerVerdict::kWaitingToo);
}

TEST(ProgressBoard, WithoutTheCallsCommunicatorNothingIsCompared) {
  BoardRecord mine = inCall(0, 0);
  EXPECT_EQ(judgePeer(mine, returned(7, 4), true, 10 * kSecond, kStale).verdict,
            PeerVerdict::kUnknown);
}

TEST(ProgressBoard, CommKeyDependsOnMembersAndTheirOrder) {
  const int a[] = {0, 1, 2}, b[] = {0, 2, 1}, c[] = {0, 1};
  EXPECT_EQ(commKey(a, 3), commKey(a, 3));
  EXPECT_NE(commKey(a, 3), commKey(b, 3));
  EXPECT_NE(commKey(a, 3), commKey(c, 2));
  EXPECT_NE(commKey(a, 0), 0u);
}

TEST(ProgressBoard, RecordsRoundTripWhileTheWriterRuns) {
  ProgressBoard board(ShmArena::anonymous(2, 256));
  EXPECT_EQ(board.read(1).pid, 0);  // fresh entries: never published
  std::thread writer([&] {
    for (std::uint64_t i = 1; i <= 50000; ++i) {
      BoardRecord r = inCall(i, i);
      r.sinceNs = static_cast<std::int64_t>(i);
      board.publish(0, r);
    }
  });
  for (int i = 0; i < 50000; ++i) {
    const BoardRecord r = board.read(0);  // never a torn record
    EXPECT_EQ(r.commKey, r.call);
    EXPECT_EQ(static_cast<std::int64_t>(r.call), r.sinceNs);
  }
  writer.join();
  board.heartbeat(1, 123);
  EXPECT_EQ(board.read(1).heartbeatNs, 123);
}

TEST(ProgressBoard, ARankPastFinalizeIsTheCauseUnlessWeAreInTheTeardownToo) {
  BoardRecord finished = returned(0, 0);
  finished.what = BoardRecord::kFinished;
  finished.heartbeatNs = 0;  // its watchdog has stopped: not "not running"
  EXPECT_EQ(judge(finished).verdict, PeerVerdict::kFinished);
  EXPECT_EQ(judge(finished).blame, Blame::kDirect);
  BoardRecord teardown = inCall(7, 1ull << 62);
  teardown.what = BoardRecord::kTeardown;
  EXPECT_EQ(judgePeer(teardown, finished, true, 10 * kSecond, kStale).blame, Blame::kNone);
}

}  // namespace
}  // namespace overpass
