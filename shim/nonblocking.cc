#include "shim/nonblocking.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/fiber.h"
#include "common/log.h"
#include "common/progress.h"
#include "gpu/memory.h"
#include "shim/call.h"
#include "shim/comm_state.h"
#include "shim/runtime.h"
#include "shim/watchdog.h"

namespace overpass::shim {

// One nonblocking collective: its fiber, and the generalized request the application holds.
struct Operation {
  MPI_Comm comm = MPI_COMM_NULL;  // the application's, for errors
  // For the watchdog while a thread waits for it: the collective, and the communicator's key on
  // the progress board with the call's number on it (shim/watchdog.h).
  int what = -1;
  std::uint64_t boardKey = 0, callNumber = 0;
  std::function<int()> body;
  std::optional<FusionPart> part;    // where it may fuse with its neighbours
  bool absorbed = false;             // served by the operation before it (absorb())
  std::unique_ptr<Fiber> fiber;      // from the start of its turn on the communicator
  void* deviceContext = nullptr;     // made current while it runs (DeviceMemory::setContext)
  Fiber::FloatControl floatControl;  // the calling thread's, which its fiber starts with
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  // Held by the engine until the operation completes and by the request until MPI frees it.
  std::atomic<int> refs{2};
  std::atomic<bool> queried{false};   // MPI_Wait/Test (or Request_get_status) saw it complete
  std::atomic<bool> complete{false};  // the engine completed it (before its request)

  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

namespace {

using OpalCallback = int (*)();
using OpalRegister = int (*)(OpalCallback);

struct Engine {
  std::mutex lock;  // held while fibers run and while operations are queued
  // The progress thread (OVERPASS_PROGRESS=thread): sleeps on `wake` while nothing is
  // outstanding.
  std::thread thread;
  std::mutex sleepLock;
  std::condition_variable wake;
  bool stopping = false;
  // The communicators with operations queued (CommState::pending), each once.
  std::vector<CommState*> active;
  std::vector<Operation*> done;        // advanceLocked's, kept for its capacity
  std::atomic<unsigned> fruitless{0};  // progress rounds in a row in which nothing moved
  OpalRegister unregister = nullptr;
  void (*libraryProgress)() = nullptr;  // opal_progress
  std::atomic<unsigned> idlePolls{0};
  bool hooked = false;
  // The requests of operations not yet freed by MPI, for MPI_Request_free and MPI_Wait(all).
  std::mutex requestsLock;
  std::unordered_map<MPI_Request, Operation*> requests;
  std::atomic<std::size_t> liveRequests{0};
  bool oversubscribed = false;
};

Engine& engine() {
  static Engine* e = new Engine();  // never destroyed: callbacks may run during exit
  return *e;
}

// The operations started and not yet completed, in every communicator: the engine's, outside it
// (constant-initialised), so that the MPI library's progress loop, which calls progressCallback at
// every turn, finds nothing to do in one load.
constinit std::atomic<int> gOutstanding{0};

// ---- The generalized request's callbacks (MPI_Grequest_start).

int queryOperation(void* extra, MPI_Status* status) {
  auto* op = static_cast<Operation*>(extra);
  op->queried.store(true, std::memory_order_relaxed);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = op->rc;
  return op->rc;
}

// MPI frees the request: after MPI_Wait/Test completed it, or at MPI_Request_free, which the
// standard makes erroneous on a nonblocking collective's request (the operation itself goes on:
// the peers need it).
int freeOperation(void* extra) {
  auto* op = static_cast<Operation*>(extra);
  {
    Engine& e = engine();
    std::lock_guard lock(e.requestsLock);
    e.requests.erase(op->request);
    e.liveRequests.store(e.requests.size(), std::memory_order_relaxed);
  }
  const bool erroneous = !op->queried.load(std::memory_order_relaxed);
  const MPI_Comm comm = op->comm;
  op->release();
  if (!erroneous) return MPI_SUCCESS;
  OVERPASS_ERROR(
      "MPI_Request_free on the request of a nonblocking collective is erroneous (MPI 3.1, "
      "5.12); the operation still completes");
  PMPI_Comm_call_errhandler(comm, MPI_ERR_REQUEST);
  return MPI_ERR_REQUEST;
}

int cancelOperation(void*, int) {
  OVERPASS_ERROR(
      "MPI_Cancel on the request of a nonblocking collective is erroneous (MPI 3.1, 5.12)");
  return MPI_ERR_REQUEST;
}

// ---- The scheduler.

// Runs `op`'s fiber until it waits or ends (starting it first if needed); false where it ended.
bool resume(Operation& op) {
  if (!op.fiber) {
    try {
      op.fiber = std::make_unique<Fiber>(
          [&op] {
            try {
              op.rc = op.body();
            } catch (const std::bad_alloc&) {
              OVERPASS_ERROR("nonblocking collective: out of memory");
              op.rc = MPI_ERR_NO_MEM;
            } catch (const std::exception& e) {
              OVERPASS_ERROR("nonblocking collective: internal error: %s", e.what());
              op.rc = MPI_ERR_INTERN;
            }
          },
          Fiber::kDefaultStack, op.floatControl);
    } catch (const std::exception&) {  // no stack for it: it fails, its peers' error shows
      OVERPASS_ERROR("nonblocking collective: no memory for its fiber");
      op.rc = MPI_ERR_NO_MEM;
      return false;
    }
  }
  DeviceMemory* device = op.deviceContext ? deviceMemory() : nullptr;
  void* previous = device ? device->setContext(op.deviceContext) : nullptr;
  op.fiber->resume();
  if (device) device->setContext(previous);
  return !op.fiber->done();
}

// The calling thread's re-entry guard, set for a pass of the engine and restored after it (the
// algorithms' own MPI calls are not intercepted again).
class GuardedPass {
 public:
  GuardedPass() : before_(ReentryGuard::active()) { ReentryGuard::set(true); }
  ~GuardedPass() { ReentryGuard::set(before_); }
  GuardedPass(const GuardedPass&) = delete;
  GuardedPass& operator=(const GuardedPass&) = delete;

 private:
  bool before_;
};

// With the lock held: resumes the first operation of every active communicator; one that ends is
// complete, and the next on the communicator starts at once. The requests of the completed ones
// complete at the end of the pass, after the last use of their communicators' state: a program
// may free a communicator as soon as its requests are complete (drain() then waits for the lock).
int advanceLocked(Engine& e) {
  GuardedPass guard;
  std::vector<Operation*>& done = e.done;
  done.clear();
  for (std::size_t i = 0; i < e.active.size();) {
    CommState& state = *e.active[i];
    int finished = 0;
    while (!state.pending.empty()) {
      Operation* op = state.pending.front();
      if (!op->absorbed && resume(*op)) break;
      state.pending.pop_front();
      op->fiber.reset();
      done.push_back(op);
      ++finished;
    }
    if (state.pending.empty()) {
      e.active[i] = e.active.back();
      e.active.pop_back();
    } else {
      ++i;
    }
    state.outstanding.fetch_sub(finished, std::memory_order_release);  // its last use
  }
  for (Operation* op : done) {
    gOutstanding.fetch_sub(1, std::memory_order_release);
    op->complete.store(true, std::memory_order_release);
    PMPI_Grequest_complete(op->request);
    op->release();
  }
  const int n = static_cast<int>(done.size());
  done.clear();
  return n;
}

// One round of the engine from outside it: whether anything moved (an operation completed, or a
// wait inside one did); *completed: how many operations completed.
bool advanceRound(int* completed = nullptr) {
  const std::uint64_t before = progressEvents();
  const int n = progressOperations();
  if (completed) *completed = n;
  return n > 0 || progressEvents() != before;
}

// progressCallback with operations outstanding: where ranks outnumber cores, rounds in which
// nothing moves give the core away after a while, for the peer that may need it (elsewhere never:
// shm/channel.h says why).
__attribute__((noinline)) int progressOutstanding() {
  // Inside a fiber (its own MPI calls), the engine runs already: nothing to count either.
  if (Fiber::inside()) return 0;
  Engine& e = engine();
  int completed = 0;
  if (advanceRound(&completed)) {
    e.fruitless.store(0, std::memory_order_relaxed);
  } else if (e.oversubscribed && e.fruitless.fetch_add(1, std::memory_order_relaxed) >=
                                     static_cast<unsigned>(kPollsBeforeYield)) {
    sched_yield();
  }
  return completed;
}

// The MPI library's progress loop calls this at every turn (inside MPI_Wait, MPI_Test, MPI_Recv,
// ...), mostly with nothing outstanding: one load and a return then.
int progressCallback() {
  return gOutstanding.load(std::memory_order_acquire) == 0 ? 0 : progressOutstanding();
}

// The progress thread: while operations are outstanding it advances them, pausing after rounds
// in which nothing moved, longer and longer (up to kMaxPause), so that it does not take the core
// the computation runs on; with none outstanding it sleeps until one starts.
constexpr auto kMaxPause = std::chrono::microseconds(200);

void progressThread() {
  sigset_t all;  // the program's signals go to its own threads
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  Engine& e = engine();
  auto pause = std::chrono::microseconds(0);
  for (;;) {
    if (gOutstanding.load(std::memory_order_acquire) == 0) {
      std::unique_lock sleep(e.sleepLock);
      e.wake.wait(sleep,
                  [&] { return e.stopping || gOutstanding.load(std::memory_order_acquire) > 0; });
      if (e.stopping) return;
      pause = std::chrono::microseconds(0);
    }
    if (advanceRound()) {
      pause = std::chrono::microseconds(0);
      continue;
    }
    if (pause.count() == 0) {
      sched_yield();
      pause = std::chrono::microseconds(1);
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, kMaxPause);
    }
  }
}

// Overpass's own waits outside fibers (common/progress.h): besides its operations, now and then
// the MPI library's progress engine, for the nonblocking calls and point-to-point transfers of the
// program that the MPI library serves (its libnbc collectives progress only inside MPI calls): a
// peer may wait on them before it joins the collective this rank waits in.
constexpr unsigned kIdlePollsPerLibraryProgress = 64;

void idleHook() {
  (void)progressOperations();
  Engine& e = engine();
  if (e.libraryProgress &&
      e.idlePolls.fetch_add(1, std::memory_order_relaxed) % kIdlePollsPerLibraryProgress == 0)
    e.libraryProgress();
}

// Until done(), advances the operations as Overpass's blocking collectives wait: polling, giving
// the core away at once where ranks outnumber cores and never elsewhere, and running the MPI
// library's progress engine now and then (the program's own nonblocking calls and transfers that
// the MPI library serves may be what a peer waits for). The operations it resumes poll a while
// before they hand the thread back (eagerWait()). Not with the engine's lock held.
template <typename Done>
void waitUntil(Done done) {
  Engine& e = engine();
  const bool eager = setEagerWait(true);
  for (unsigned polls = 0; !done();) {
    if (advanceRound()) {
      polls = 0;
      continue;
    }
    ++polls;
    if (e.libraryProgress && polls % kIdlePollsPerLibraryProgress == 0) e.libraryProgress();
    if (e.oversubscribed) sched_yield();
  }
  setEagerWait(eager);
}

// Until the operations among `requests` (MPI_REQUEST_NULL and others' skipped) complete, in
// Overpass's loop: the MPI library's own wait loop would advance them too, through the progress
// callback, but with its whole progress engine between two polls.
void awaitOperations(const MPI_Request* requests, int n) {
  Engine& e = engine();
  if (e.liveRequests.load(std::memory_order_relaxed) == 0 || n <= 0 || !requests) return;
  // Up to kFew without the heap (MPI_Wait's one, most Waitall arrays).
  constexpr int kFew = 16;
  Operation* few[kFew];
  std::vector<Operation*> many;
  int found = 0;
  {
    std::lock_guard lock(e.requestsLock);
    for (int i = 0; i < n; ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      const auto it = e.requests.find(requests[i]);
      if (it == e.requests.end()) continue;
      if (found < kFew) {
        few[found] = it->second;
      } else {
        if (many.empty()) many.assign(few, few + kFew);
        many.push_back(it->second);
      }
      ++found;
    }
  }
  Operation* const* ops = found <= kFew ? few : many.data();
  // Watched (OVERPASS_TIMEOUT) as the blocking call would be, as the first one still running.
  const Operation* first = nullptr;
  for (int i = 0; i < found && !first; ++i)
    if (!ops[i]->complete.load(std::memory_order_acquire)) first = ops[i];
  if (!first) return;
  WatchedCall watch(first->what, first->comm);
  if (watch.active() && first->boardKey) watch.identify(first->boardKey, first->callNumber);
  waitUntil([&] {
    for (int i = 0; i < found; ++i)
      if (!ops[i]->complete.load(std::memory_order_acquire)) return false;
    return true;
  });
}

}  // namespace

bool nonblockingReady() {
  return engine().hooked;
}

void startNonblockingEngine(bool thread, bool oversubscribed) {
  Engine& e = engine();
  e.oversubscribed = oversubscribed;
  // Open MPI's progress engine (libopen-pal, loaded with libmpi): not part of the MPI standard,
  // looked up at run time; without it nonblocking collectives go to the MPI library.
  auto reg = reinterpret_cast<OpalRegister>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  e.unregister = reinterpret_cast<OpalRegister>(dlsym(RTLD_DEFAULT, "opal_progress_unregister"));
  e.libraryProgress = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "opal_progress"));
  if (!reg || !e.unregister || reg(&progressCallback) != 0) {
    OVERPASS_WARN(
        "cannot hook into the MPI library's progress engine (opal_progress_register): "
        "nonblocking collectives go to the MPI library");
    return;
  }
  e.hooked = true;
  setIdleHook(&idleHook);
  if (thread) e.thread = std::thread(progressThread);
}

void stopNonblockingEngine() {
  Engine& e = engine();
  if (!e.hooked) return;
  waitUntil([&] { return gOutstanding.load(std::memory_order_acquire) == 0; });
  if (e.thread.joinable()) {
    {
      std::lock_guard sleep(e.sleepLock);
      e.stopping = true;
    }
    e.wake.notify_one();
    e.thread.join();
  }
  setIdleHook(nullptr);
  e.unregister(&progressCallback);
  e.hooked = false;
}

int startOperation(CommState& state, const Call& call, std::function<int()> body,
                   std::optional<FusionPart> part, void* deviceContext) {
  auto* op = new Operation();
  op->comm = call.comm;
  op->what = static_cast<int>(call.coll);
  op->boardKey = state.boardKey;
  op->callNumber = state.calls;
  op->body = std::move(body);
  op->part = part;
  op->deviceContext = deviceContext;
  op->floatControl = Fiber::floatControl();
  const int rc =
      PMPI_Grequest_start(&queryOperation, &freeOperation, &cancelOperation, op, &op->request);
  if (rc != MPI_SUCCESS) {
    delete op;
    return rc;
  }
  *call.request = op->request;
  Engine& e = engine();
  {
    std::lock_guard lock(e.requestsLock);
    e.requests.emplace(op->request, op);
    e.liveRequests.store(e.requests.size(), std::memory_order_relaxed);
  }
  {
    std::lock_guard lock(e.lock);
    if (state.pending.empty()) e.active.push_back(&state);
    state.pending.push_back(op);
    ++state.outstanding;
    gOutstanding.fetch_add(1, std::memory_order_release);
    // Started at once (where it is the communicator's first), together with whatever else can
    // move: delaying a start until a later call could deadlock a legal program.
    advanceLocked(e);
  }
  if (e.thread.joinable()) {
    std::lock_guard sleep(e.sleepLock);  // no lost wake-up between its check and its wait
    e.wake.notify_one();
  }
  return MPI_SUCCESS;
}

std::vector<FusionPart> partsBehind(CommState& state, const FusionPart& mine, std::size_t limit) {
  std::vector<FusionPart> parts;
  std::size_t bytes = mine.bytes;
  for (std::size_t i = 1; i < state.pending.size(); ++i) {
    const std::optional<FusionPart>& p = state.pending[i]->part;
    if (!p || p->key != mine.key || bytes + p->bytes > limit) break;
    bytes += p->bytes;
    parts.push_back(*p);
  }
  return parts;
}

void absorb(CommState& state, std::size_t n, int rc) {
  for (std::size_t i = 1; i <= n && i < state.pending.size(); ++i) {
    state.pending[i]->absorbed = true;
    state.pending[i]->rc = rc;
  }
}

int onRequestFree(MPI_Request* request) {
  Engine& e = engine();
  if (request && e.liveRequests.load(std::memory_order_relaxed) > 0) {
    bool ours = false;
    {
      std::lock_guard lock(e.requestsLock);
      ours = e.requests.count(*request) != 0;
    }
    if (ours) {
      OVERPASS_ERROR(
          "MPI_Request_free on the request of a nonblocking collective is erroneous (MPI 3.1, "
          "5.12); the request is left as it was");
      PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
      return MPI_ERR_REQUEST;
    }
  }
  return PMPI_Request_free(request);
}

int onWait(MPI_Request* request, MPI_Status* status) {
  if (request) awaitOperations(request, 1);
  return PMPI_Wait(request, status);
}

int onWaitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  awaitOperations(requests, count);
  return PMPI_Waitall(count, requests, statuses);
}

void drain(CommState& state) {
  if (state.outstanding.load(std::memory_order_acquire) == 0) return;
  waitUntil([&] { return state.outstanding.load(std::memory_order_acquire) == 0; });
  std::lock_guard lock(engine().lock);  // the pass that completed the last one has ended
}

int progressOperations() {
  if (gOutstanding.load(std::memory_order_acquire) == 0 || Fiber::inside()) return 0;
  Engine& e = engine();
  std::unique_lock lock(e.lock, std::try_to_lock);
  if (!lock) return 0;
  return advanceLocked(e);
}

}  // namespace overpass::shim
