#include "common/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace overpass {
namespace {

// Read at every poll of a nonblocking collective: the initial-exec model spares the call to
// __tls_get_addr (a few bytes of the static TLS surplus, which a preloaded library has).
__attribute__((tls_model("initial-exec"))) thread_local Fiber* tCurrent = nullptr;

// Stacks of ended fibers, kept for the next ones (a new mapping costs three system calls):
// nonblocking collectives start and end fibers at the rate of the application's calls.
struct StackPool {
  static constexpr std::size_t kKept = 16;
  std::mutex lock;
  std::vector<std::pair<void*, std::size_t>> free;  // mapping, bytes

  void* take(std::size_t bytes) {
    std::lock_guard guard(lock);
    for (std::size_t i = 0; i < free.size(); ++i)
      if (free[i].second == bytes) {
        void* stack = free[i].first;
        free[i] = free.back();
        free.pop_back();
        return stack;
      }
    return nullptr;
  }
  void give(void* stack, std::size_t bytes) {
    {
      std::lock_guard guard(lock);
      if (free.size() < kKept) {
        free.emplace_back(stack, bytes);
        return;
      }
    }
    munmap(stack, bytes);
  }
};

StackPool& stackPool() {
  static StackPool* pool = new StackPool();  // never destroyed: fibers may end during exit
  return *pool;
}

}  // namespace

#if defined(__x86_64__)

// overpass_fiber_switch(&save, next): saves the callee-saved registers, the SSE control word and
// the x87 control word on the current stack, stores the stack pointer in *save, switches to
// `next` and restores the same from it. A few nanoseconds, no system call (swapcontext masks
// signals with one).
extern "C" void overpass_fiber_switch(void** save, void* next);
asm(R"(
  .text
  .p2align 4
  .type overpass_fiber_switch,@function
overpass_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size overpass_fiber_switch,.-overpass_fiber_switch
)");

namespace {

void switchTo(void** save, void* next) {
  overpass_fiber_switch(save, next);
}

// A new fiber's stack as overpass_fiber_switch expects to find it: the control words, six zero
// registers and the address to return to (`entry`), whose own frame then starts 16-byte aligned
// less the return address the ABI expects (zero: entry never returns).
void* initialStack(void* top, void (*entry)(), const Fiber::FloatControl& start) {
  auto* sp = static_cast<std::uint64_t*>(top);
  *--sp = 0;                                       // entry's return address: none
  *--sp = reinterpret_cast<std::uint64_t>(entry);  // where the first switch returns to
  for (int i = 0; i < 6; ++i) *--sp = 0;           // rbp, rbx, r12-r15
  const Fiber::FloatControl fp = start.valid ? start : Fiber::floatControl();
  *--sp = static_cast<std::uint64_t>(fp.mxcsr) | (static_cast<std::uint64_t>(fp.fcw) << 32);
  return sp;
}

}  // namespace

#else  // portable: ucontext (one system call per switch)

namespace {

struct Contexts {
  ucontext_t fiber, caller;
};

}  // namespace

#endif

#if defined(__x86_64__)
Fiber::FloatControl Fiber::floatControl() {
  FloatControl fp;
  asm volatile("stmxcsr %0" : "=m"(fp.mxcsr));
  asm volatile("fnstcw %0" : "=m"(fp.fcw));
  fp.valid = true;
  return fp;
}
#else
Fiber::FloatControl Fiber::floatControl() {
  FloatControl fp;
  fp.valid = std::fegetenv(&fp.env) == 0;
  return fp;
}
#endif

Fiber::Fiber(std::function<void()> body, std::size_t stackBytes, FloatControl start)
    : body_(std::move(body)) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  mapped_ = (stackBytes + page - 1) / page * page + page;
  stack_ = stackPool().take(mapped_);
  if (!stack_) {
    stack_ = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stack_ == MAP_FAILED) {
      stack_ = nullptr;
      throw std::bad_alloc();
    }
    mprotect(stack_, page, PROT_NONE);  // a stack overflow faults instead of corrupting memory
  }
  void* top = static_cast<char*>(stack_) + mapped_;
#if defined(__x86_64__)
  sp_ = initialStack(top, &Fiber::entry, start);
#else
  auto* c = new Contexts();
  getcontext(&c->fiber);
  c->fiber.uc_stack.ss_sp = static_cast<char*>(stack_) + page;
  c->fiber.uc_stack.ss_size = mapped_ - page;
  c->fiber.uc_link = nullptr;
  makecontext(&c->fiber, &Fiber::entry, 0);
  sp_ = c;
  start_ = start;
  (void)top;
#endif
}

Fiber::~Fiber() {
#if !defined(__x86_64__)
  delete static_cast<Contexts*>(sp_);
#endif
  if (stack_) stackPool().give(stack_, mapped_);
}

void Fiber::resume() {
  outer_ = tCurrent;
  tCurrent = this;
#if defined(__x86_64__)
  switchTo(&callerSp_, sp_);
#else
  auto* c = static_cast<Contexts*>(sp_);
  swapcontext(&c->caller, &c->fiber);
#endif
  tCurrent = outer_;
}

void Fiber::yield() {
  Fiber* self = tCurrent;
  if (!self) return;
#if defined(__x86_64__)
  switchTo(&self->sp_, self->callerSp_);
#else
  auto* c = static_cast<Contexts*>(self->sp_);
  swapcontext(&c->fiber, &c->caller);
#endif
  // Resumed, perhaps on another thread: nothing thread-local may be used from here on.
}

bool Fiber::inside() {
  return tCurrent != nullptr;
}

void Fiber::entry() {
  Fiber* self = tCurrent;
#if !defined(__x86_64__)
  if (self->start_.valid) std::fesetenv(&self->start_.env);
#endif
  self->body_();  // the body catches its own exceptions: none may leave a fiber
  self->done_ = true;
  // Back to the thread that resumed it last (callerSp_ is its stack).
#if defined(__x86_64__)
  void* unused = nullptr;
  switchTo(&unused, self->callerSp_);
#else
  setcontext(&static_cast<Contexts*>(self->sp_)->caller);
#endif
  std::abort();  // never resumed again
}

}  // namespace overpass
