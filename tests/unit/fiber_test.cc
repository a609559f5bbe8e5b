// Fibers (common/fiber.h) and the idle step of waits (common/progress.h), on which the
// nonblocking collectives stand (shim/nonblocking.h).
#include "common/fiber.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/progress.h"

namespace overpass {
namespace {

TEST(Fiber, RunsUntilItYieldsAndGoesOnWhereItStopped) {
  std::vector<int> trace;
  Fiber f([&] {
    trace.push_back(1);
    EXPECT_TRUE(Fiber::inside());
    Fiber::yield();
    trace.push_back(2);
    Fiber::yield();
    trace.push_back(3);
  });
  EXPECT_FALSE(Fiber::inside());
  f.resume();
  EXPECT_EQ(trace, std::vector<int>({1}));
  EXPECT_FALSE(f.done());
  f.resume();
  f.resume();
  EXPECT_EQ(trace, std::vector<int>({1, 2, 3}));
  EXPECT_TRUE(f.done());
  Fiber::yield();  // outside a fiber: nothing
}

TEST(Fiber, ResumesOnAnotherThreadWithItsStackIntact) {
  int seen = 0;
  Fiber f([&] {
    volatile char local[4096];  // lives on the fiber's stack across the move
    std::memset(const_cast<char*>(local), 7, sizeof(local));
    Fiber::yield();
    seen = local[100] + local[4000];
  });
  f.resume();
  std::thread([&] { f.resume(); }).join();
  EXPECT_TRUE(f.done());
  EXPECT_EQ(seen, 14);
}

TEST(Fiber, NestsAndKeepsTheCallersFloatingPointMode) {
  std::vector<int> trace;
  Fiber inner([&] {
    trace.push_back(2);
    Fiber::yield();
    trace.push_back(4);
  });
  Fiber outer([&] {
    trace.push_back(1);
    inner.resume();  // inner's yield comes back here, not to the test
    trace.push_back(3);
    inner.resume();
    EXPECT_TRUE(Fiber::inside());
  });
  const int mode = std::fegetround();
  outer.resume();
  EXPECT_EQ(trace, std::vector<int>({1, 2, 3, 4}));
  EXPECT_TRUE(inner.done() && outer.done());
  EXPECT_FALSE(Fiber::inside());
  EXPECT_EQ(std::fegetround(), mode);
}

// A nonblocking collective's fiber reduces with the rounding mode of the thread that called it,
// whichever thread (the progress thread) first resumes it.
TEST(Fiber, StartsWithTheFloatingPointControlItIsGiven) {
  const int mode = std::fegetround();
  Fiber::FloatControl upward;
  std::thread([&] {
    std::fesetround(FE_UPWARD);
    upward = Fiber::floatControl();
  }).join();
  ASSERT_TRUE(upward.valid);
  int inside = -1, given = -1;
  Fiber plain([&] { inside = std::fegetround(); });
  Fiber f([&] { given = std::fegetround(); }, Fiber::kDefaultStack, upward);
  plain.resume();
  f.resume();
  EXPECT_EQ(inside, mode);  // none given: the constructing thread's
  EXPECT_EQ(given, FE_UPWARD);
  EXPECT_EQ(std::fegetround(), mode);  // the resumer's own, back after the switch
  EXPECT_NE(mode, FE_UPWARD);
}

TEST(Fiber, DeepStacksAndExceptionsCaughtInside) {
  bool caught = false;
  Fiber f([&] {
    std::vector<char> big(1 << 20);  // heap; and a deep-ish frame below
    volatile char frame[200 << 10];
    frame[0] = 1;
    try {
      throw std::runtime_error("inside");
    } catch (const std::exception&) {
      caught = frame[0] == 1 && big.size() == (1u << 20);
    }
  });
  f.resume();
  EXPECT_TRUE(f.done());
  EXPECT_TRUE(caught);
}

int gHookRuns = 0;

TEST(Idle, YieldsInsideAFiberAndRunsTheHookOutside) {
  setIdleHook([] { ++gHookRuns; });
  idle(false);
  EXPECT_EQ(gHookRuns, 1);
  int steps = 0;
  Fiber f([&] {
    for (int i = 0; i < 3; ++i) {
      ++steps;
      idle(true);  // yields: the hook does not run inside a fiber
    }
  });
  for (int i = 1; i <= 3; ++i) {
    f.resume();
    EXPECT_EQ(steps, i);
  }
  f.resume();
  EXPECT_TRUE(f.done());
  EXPECT_EQ(gHookRuns, 1);
  setIdleHook(nullptr);
  idle(false);
  EXPECT_EQ(gHookRuns, 1);
}

TEST(Idle, ProgressNotesAreCounted) {
  const std::uint64_t before = progressEvents();
  noteProgress();
  EXPECT_EQ(progressEvents(), before + 1);
}

}  // namespace
}  // namespace overpass
