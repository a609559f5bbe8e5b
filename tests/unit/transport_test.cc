// Every operation of the Transport interface on the loopback transport (ranks as threads), and
// the UCX tag layout.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include "loopback_team.h"
#include "transport/split_transport.h"

// The yields of the calling thread, counted: this definition takes the place of the C library's
// in this executable (the C library's own calls keep theirs), and still yields.
namespace {
thread_local int tYields = 0;
}  // namespace

extern "C" int sched_yield() noexcept {
  ++tYields;
  return static_cast<int>(syscall(SYS_sched_yield));
}

namespace overpass {
namespace {

using test::runTeam;

TEST(LoopbackTransport, SendRecvAndZeroBytes) {
  runTeam(2, [](Team& team) {
    Transport& t = team.transport;
    std::vector<int> data(1000);
    if (t.rank() == 0) {
      std::iota(data.begin(), data.end(), 5);
      EXPECT_EQ(t.send(data.data(), data.size() * sizeof(int), 1, 3), Status::kOk);
      EXPECT_EQ(t.send(nullptr, 0, 1, 3), Status::kOk);
    } else {
      EXPECT_EQ(t.recv(data.data(), data.size() * sizeof(int), 0, 3), Status::kOk);
      EXPECT_EQ(data[0], 5);
      EXPECT_EQ(data[999], 1004);
      EXPECT_EQ(t.recv(nullptr, 0, 0, 3), Status::kOk);
    }
  });
}

TEST(LoopbackTransport, SendrecvBothWays) {
  runTeam(3, [](Team& team) {
    Transport& t = team.transport;
    const int right = (t.rank() + 1) % 3, left = (t.rank() + 2) % 3;
    int out = t.rank() * 10, in = -1;
    EXPECT_EQ(t.sendrecv(&out, sizeof(out), right, &in, sizeof(in), left, 0), Status::kOk);
    EXPECT_EQ(in, left * 10);
  });
}

TEST(LoopbackTransport, ExchangeBatchWithEveryPeer) {
  runTeam(5, [](Team& team) {
    Transport& t = team.transport;
    const int n = t.size();
    std::vector<int> out(n), in(n, -1);
    std::vector<P2POp> ops;
    for (int p = 0; p < n; ++p) {
      if (p == t.rank()) continue;
      out[p] = t.rank() * 100 + p;
      ops.push_back(P2POp::send(&out[p], sizeof(int), p));
      ops.push_back(P2POp::recv(&in[p], sizeof(int), p));
    }
    EXPECT_EQ(t.exchange(ops, 7), Status::kOk);
    for (int p = 0; p < n; ++p) {
      if (p != t.rank()) {
        EXPECT_EQ(in[p], p * 100 + t.rank());
      }
    }
  });
}

TEST(LoopbackTransport, MessagesOfOneTagArriveInOrderAndTagsStayApart) {
  runTeam(2, [](Team& team) {
    Transport& t = team.transport;
    if (t.rank() == 0) {
      for (int i = 0; i < 10; ++i) t.send(&i, sizeof(i), 1, 1);
      const int other = 99;
      t.send(&other, sizeof(other), 1, 2);
    } else {
      int v = -1;
      t.recv(&v, sizeof(v), 0, 2);  // the later message of another tag is received first
      EXPECT_EQ(v, 99);
      for (int i = 0; i < 10; ++i) {
        t.recv(&v, sizeof(v), 0, 1);
        EXPECT_EQ(v, i);
      }
    }
  });
}

TEST(LoopbackTransport, SizeMismatchIsAnError) {
  runTeam(2, [](Team& team) {
    Transport& t = team.transport;
    int v[2] = {1, 2};
    if (t.rank() == 0)
      t.send(v, sizeof(v), 1, 0);
    else
      EXPECT_EQ(t.recv(v, sizeof(int), 0, 0), Status::kTransportError);
  });
}

TEST(LoopbackTransport, StartTestWait) {
  LoopbackFabric fabric(2);
  LoopbackTransport a(fabric, 0), b(fabric, 1);
  int in = -1, out = 42;
  const P2POp recv = P2POp::recv(&in, sizeof(in), 1);
  Transport::Request request;
  ASSERT_EQ(a.start({&recv, 1}, 4, &request), Status::kOk);
  bool done = true;
  ASSERT_EQ(a.test(request, &done), Status::kOk);
  EXPECT_FALSE(done) << "nothing was sent yet";
  EXPECT_TRUE(request);
  EXPECT_EQ(b.send(&out, sizeof(out), 0, 4), Status::kOk);
  ASSERT_EQ(a.test(request, &done), Status::kOk);
  EXPECT_TRUE(done);
  EXPECT_FALSE(request) << "a completed request is released";
  EXPECT_EQ(in, 42);
  // wait() on a batch whose message is already there.
  out = 7;
  EXPECT_EQ(b.send(&out, sizeof(out), 0, 5), Status::kOk);
  const P2POp recv2 = P2POp::recv(&in, sizeof(in), 1);
  ASSERT_EQ(a.start({&recv2, 1}, 5, &request), Status::kOk);
  EXPECT_EQ(a.wait(request), Status::kOk);
  EXPECT_EQ(in, 7);
}

// Ranks 0 and 1 on one host, rank 2 on another; messages between hosts below 64 bytes go over
// the "far" fabric, the others over the "near" one.
struct SplitTeam {
  static constexpr std::size_t kFarBelow = 64;
  LoopbackFabric nearFabric{3}, farFabric{3};
  std::vector<std::unique_ptr<SplitTransport>> ranks;
  SplitTeam() {
    const int host[3] = {0, 0, 1};
    for (int r = 0; r < 3; ++r) {
      std::vector<bool> far(3);
      for (int p = 0; p < 3; ++p) far[p] = host[p] != host[r];
      ranks.push_back(std::make_unique<SplitTransport>(
          std::make_unique<LoopbackTransport>(nearFabric, r),
          std::make_unique<LoopbackTransport>(farFabric, r), far, kFarBelow,
          /*crowded=*/true));  // ranks as threads, which may share cores
    }
  }
};

TEST(SplitTransport, RoutesByPeerAndSize) {
  SplitTeam team;
  std::vector<char> small(16, 's'), large(100, 'l'), buf(100);
  const P2POp ops[] = {P2POp::send(small.data(), small.size(), 1),
                       P2POp::send(small.data(), small.size(), 2),
                       P2POp::send(large.data(), large.size(), 2), P2POp::send(nullptr, 0, 2)};
  ASSERT_EQ(team.ranks[0]->exchange(ops, 3), Status::kOk);
  // Where each message went (take of the next receive posted: 1 found, 0 not there).
  auto take = [&](LoopbackFabric& f, int dst, std::size_t bytes) {
    return f.take(0, dst, 3, f.postReceive(0, dst, 3), buf.data(), bytes, false);
  };
  EXPECT_EQ(take(team.nearFabric, 1, 16), 1) << "same host: near";
  EXPECT_EQ(take(team.farFabric, 2, 16), 1) << "small, other host: far";
  EXPECT_EQ(take(team.farFabric, 2, 0), 1) << "empty, other host: far";
  EXPECT_EQ(take(team.nearFabric, 2, 100), 1) << "large: near";
  EXPECT_EQ(take(team.nearFabric, 2, 16), 0);
  EXPECT_EQ(take(team.farFabric, 2, 100), 0);
  EXPECT_EQ(take(team.farFabric, 1, 16), 0);
}

TEST(SplitTransport, MessagesMatchInOrderAcrossBothTransports) {
  SplitTeam team;
  std::vector<char> a(16, 'a'), b(100, 'b'), c(16, 'c');
  std::vector<char> ra(16), rb(100), rc(16);
  // Rank 2 posts first and tests: nothing there yet.
  const P2POp recvs[] = {P2POp::recv(ra.data(), ra.size(), 0), P2POp::recv(rb.data(), rb.size(), 0),
                         P2POp::recv(rc.data(), rc.size(), 0)};
  Transport::Request request;
  ASSERT_EQ(team.ranks[2]->start(recvs, 9, &request), Status::kOk);
  bool done = true;
  ASSERT_EQ(team.ranks[2]->test(request, &done), Status::kOk);
  EXPECT_FALSE(done);
  EXPECT_EQ(team.ranks[0]->send(a.data(), a.size(), 2, 9), Status::kOk);
  EXPECT_EQ(team.ranks[0]->send(b.data(), b.size(), 2, 9), Status::kOk);
  ASSERT_EQ(team.ranks[2]->test(request, &done), Status::kOk);
  EXPECT_FALSE(done) << "the third message has not been sent";
  EXPECT_EQ(team.ranks[0]->send(c.data(), c.size(), 2, 9), Status::kOk);
  ASSERT_EQ(team.ranks[2]->wait(request), Status::kOk);
  EXPECT_FALSE(request);
  EXPECT_EQ(ra, a);
  EXPECT_EQ(rb, b);
  EXPECT_EQ(rc, c);
}

TEST(SplitTransport, AFailureOnEitherSideIsReported) {
  SplitTeam team;
  std::vector<char> small(16, 's'), large(100, 'l'), wrongSmall(8), wrongLarge(99);
  ASSERT_EQ(team.ranks[0]->send(small.data(), small.size(), 2, 1), Status::kOk);
  ASSERT_EQ(team.ranks[0]->send(large.data(), large.size(), 2, 2), Status::kOk);
  // Receives of the wrong size: the far one (8 bytes), then the near one (99 bytes).
  EXPECT_NE(team.ranks[2]->recv(wrongSmall.data(), wrongSmall.size(), 0, 1), Status::kOk);
  EXPECT_NE(team.ranks[2]->recv(wrongLarge.data(), wrongLarge.size(), 0, 2), Status::kOk);
}

// A batch with operations on one transport only, or on none, completes through wait and test.
TEST(SplitTransport, BatchesOnOneSideOrNoneComplete) {
  SplitTeam team;
  Transport::Request request;
  ASSERT_EQ(team.ranks[0]->start({}, 4, &request), Status::kOk);
  EXPECT_EQ(team.ranks[0]->wait(request), Status::kOk);
  EXPECT_FALSE(request);
  ASSERT_EQ(team.ranks[0]->start({}, 4, &request), Status::kOk);
  bool done = false;
  EXPECT_EQ(team.ranks[0]->test(request, &done), Status::kOk);
  EXPECT_TRUE(done);
  std::vector<char> small(16, 's'), got(16);
  for (int peer : {1, 2}) {  // near only, then far only
    const P2POp send[] = {P2POp::send(small.data(), small.size(), peer)};
    ASSERT_EQ(team.ranks[0]->start(send, 5, &request), Status::kOk);
    EXPECT_EQ(team.ranks[0]->wait(request), Status::kOk);
    EXPECT_EQ(team.ranks[peer]->recv(got.data(), got.size(), 0, 5), Status::kOk);
    EXPECT_EQ(got, small);
  }
}

// A batch that completes at its `polls`-th test.
class SlowTransport final : public Transport {
 public:
  explicit SlowTransport(int polls) : polls_(polls) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status start(std::span<const P2POp>, int, Request* request) override {
    *request = std::make_unique<Batch>();
    left_ = polls_;
    return Status::kOk;
  }
  Status test(Request& request, bool* done) override {
    *done = --left_ == 0;
    if (*done) request.reset();
    return Status::kOk;
  }
  Status wait(Request& request) override { return pollUntilDone(request, crowded); }
  bool crowded = false;

 private:
  int polls_, left_ = 0;
};

// Where ranks fit the cores a wait never gives the core away (beside other processes' load a
// yield hands it to them for a time slice); where they outnumber the cores it does, after
// kPollsBeforeYield fruitless polls.
TEST(Transport, AWaitGivesTheCoreAwayOnlyWhereRanksOutnumberCores) {
  constexpr int kPolls = kPollsBeforeYield + 100;
  SlowTransport t(kPolls);
  tYields = 0;
  EXPECT_EQ(t.exchange({}, 0), Status::kOk);
  EXPECT_EQ(tYields, 0);
  t.crowded = true;
  EXPECT_EQ(t.exchange({}, 0), Status::kOk);
  EXPECT_EQ(tYields, kPolls - 1 - kPollsBeforeYield);
}

}  // namespace
}  // namespace overpass
