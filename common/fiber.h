// Fiber: a function that runs on its own stack and can stop in the middle (yield) and be resumed
// later, possibly by another thread. Overpass runs each nonblocking collective as a fiber
// (shim/nonblocking.h): its algorithm is the blocking one, and every wait inside it that finds
// nothing to do yields (common/progress.h, idle()), so that the call returns to the application
// while the collective is in flight and progresses whenever a thread resumes it.
//
// Code that runs inside a fiber must not keep the address of a thread-local variable across a
// yield (the fiber may come back on another thread): read thread-locals through functions that
// are not inlined (shim/runtime.h, ReentryGuard; common/progress.h, noteProgress).
#pragma once

#include <cfenv>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace overpass {

// The floating-point control state a fiber starts with: rounding mode, exception masks and (on
// x86-64) flush-to-zero. A fiber keeps its own across switches; it starts with the one given
// to it, taken by Fiber::floatControl() where the work was handed over (a nonblocking collective's
// call), else with that of the thread that constructs it.
struct FiberFloatControl {
#if defined(__x86_64__)
  std::uint32_t mxcsr = 0;
  std::uint16_t fcw = 0;
#else
  std::fenv_t env{};
#endif
  bool valid = false;
};

class Fiber {
 public:
  // The floating-point control state a fiber starts with (FiberFloatControl above); the calling
  // thread's.
  using FloatControl = FiberFloatControl;
  static FloatControl floatControl();

  // A fiber that will run `body` on a stack of `stackBytes` (a guard page below it).
  Fiber(std::function<void()> body, std::size_t stackBytes = kDefaultStack,
        FloatControl start = {});
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Runs the body until it yields or returns. Not while it runs elsewhere; not once done().
  void resume();
  bool done() const { return done_; }

  // Inside a fiber: back to the resume() that runs it. Outside one: nothing.
  static void yield();
  // Whether the calling code runs inside a fiber.
  static bool inside();

  // Reserved, not committed (MAP_NORESERVE): only the pages a fiber touches cost memory.
  static constexpr std::size_t kDefaultStack = std::size_t{4} << 20;

 private:
  static void entry();

  std::function<void()> body_;
  void* stack_ = nullptr;  // the mapping, guard page first
  std::size_t mapped_ = 0;
  void* sp_ = nullptr;        // the fiber's saved stack pointer while it is not running
  void* callerSp_ = nullptr;  // the resumer's, while it runs
  Fiber* outer_ = nullptr;    // the fiber that resumed this one (fibers may nest), or null
  bool done_ = false;
#if !defined(__x86_64__)
  FloatControl start_;  // applied by entry()
#endif
};

}  // namespace overpass
