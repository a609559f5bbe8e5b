#include "common/progress.h"

#include <sched.h>

#include "common/fiber.h"

namespace overpass {
namespace {

// See common/fiber.cc's tCurrent for the model.
__attribute__((tls_model("initial-exec"))) thread_local std::atomic<std::uint64_t>* tCounter =
    nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool tEager = false;
std::atomic<std::uint64_t> gEvents{0};
std::atomic<void (*)()> gIdleHook{nullptr};

}  // namespace

__attribute__((noinline)) void noteProgress() {
  gEvents.fetch_add(1, std::memory_order_relaxed);
  if (std::atomic<std::uint64_t>* c = tCounter) c->fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t progressEvents() {
  return gEvents.load(std::memory_order_relaxed);
}

std::atomic<std::uint64_t>* setProgressCounter(std::atomic<std::uint64_t>* counter) {
  std::atomic<std::uint64_t>* previous = tCounter;
  tCounter = counter;
  return previous;
}

__attribute__((noinline)) bool eagerWait() {
  return tEager;
}

bool setEagerWait(bool on) {
  const bool previous = tEager;
  tEager = on;
  return previous;
}

void idle(bool yieldCore) {
  if (Fiber::inside()) {
    Fiber::yield();
    return;
  }
  if (void (*hook)() = gIdleHook.load(std::memory_order_acquire)) hook();
  if (yieldCore) sched_yield();
}

void setIdleHook(void (*hook)()) {
  gIdleHook.store(hook, std::memory_order_release);
}

}  // namespace overpass
