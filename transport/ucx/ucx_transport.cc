// The only file that includes UCX headers.
#include "transport/ucx/ucx_transport.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/collective.h"
#include "common/log.h"
#include "common/progress.h"

namespace overpass {
namespace {

using Clock = std::chrono::steady_clock;

// How long a wait must have made no progress before same-host peers are checked for life.
constexpr double kLivenessCheckSeconds = 0.5;

// Start-up warm-up of the shared-memory FIFOs (UCX_MM_FIFO_SIZE is 64 by default).
constexpr int kWarmMessages = 128;
constexpr std::size_t kWarmMessageBytes = 4096;

// The progress thread (progressLoop) takes over once Overpass's calls have left the worker alone
// for an interval of kIdlePollMs; it sleeps until the worker has an event, looking again after
// kProgressSafetyMs at the latest (an event consumed by a call's progress just before the thread
// armed the worker).
constexpr int kIdlePollMs = 10;
constexpr int kProgressSafetyMs = 100;

struct PeerState {
  int worldRank = -1;
  std::atomic<ucs_status_t> status{UCS_OK};
  const std::atomic<bool>* closing = nullptr;  // the context's: the job is ending
};

void onEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* peer = static_cast<PeerState*>(arg);
  peer->status.store(status);
  // Once the job ends, a peer that closed its endpoints first shows here as failed (UCX's TCP
  // transport reports any closed connection as a timeout): expected, not an error.
  if (peer->closing->load(std::memory_order_relaxed))
    OVERPASS_DEBUG("UCX endpoint to world rank %d closed by the peer at the end: %s",
                   peer->worldRank, ucs_status_string(status));
  else
    OVERPASS_ERROR("UCX endpoint to world rank %d failed: %s", peer->worldRank,
                   ucs_status_string(status));
}

std::string collectiveOfTag(int tag) {
  return tag >= 0 && tag < static_cast<int>(kNumCollectives)
             ? std::string(collectiveName(static_cast<Collective>(tag)))
             : "tag " + std::to_string(tag);
}

// This worker's address: every transport, or (netOnly) those that reach other hosts.
ucs_status_t workerAddress(ucp_worker_h worker, bool netOnly, std::vector<char>* out) {
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
  attr.address_flags = netOnly ? UCP_WORKER_ADDRESS_FLAG_NET_ONLY : 0;
  const ucs_status_t status = ucp_worker_query(worker, &attr);
  if (status != UCS_OK) return status;
  const char* p = reinterpret_cast<const char*>(attr.address);
  out->assign(p, p + attr.address_length);
  ucp_worker_release_address(worker, attr.address);
  return UCS_OK;
}

// Every rank's record of bytes (records differ in length; an empty one says "none"): a
// collective over the bootstrap, which every rank enters whatever its own outcome.
Status allgatherRecords(Bootstrap& bootstrap, std::vector<char> mine,
                        std::vector<std::vector<char>>* all) {
  const int size = bootstrap.size();
  std::uint64_t length = mine.size();
  std::vector<std::uint64_t> lengths(size);
  OVERPASS_CHECK(bootstrap.allgather(&length, lengths.data(), sizeof(length)));
  const std::size_t width = *std::max_element(lengths.begin(), lengths.end());
  mine.resize(width);
  std::vector<char> gathered(width * size);
  if (width > 0) OVERPASS_CHECK(bootstrap.allgather(mine.data(), gathered.data(), width));
  all->clear();
  for (int r = 0; r < size; ++r)
    all->emplace_back(gathered.begin() + r * width, gathered.begin() + r * width + lengths[r]);
  return Status::kOk;
}

}  // namespace

struct UcxContext::Impl {
  UcxOptions options;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  int worldRank = 0;
  std::vector<std::vector<char>> addresses;  // worker address of every world rank
  std::vector<ucp_ep_h> endpoints;           // by world rank, created on first use
  std::unique_ptr<PeerState[]> peers;
  std::atomic<bool> closing{false};  // see UcxContext::closing()
  std::mutex mutex;                  // endpoints

  // Progress between Overpass's calls. A send UCX reports complete may still have bytes in its
  // own buffer (UCX's TCP transport copies a message in and writes what the socket takes), and a
  // received rendezvous may still owe its acknowledgement: both need this worker progressed, and
  // the MPI library, in whose calls the application may be waiting for the very peer that needs
  // those bytes, never progresses it. The thread does, while no call does: a call announces itself
  // in `entries` and waits for the thread's turn to end (`threadTurn`); the thread takes a turn
  // only when every call has ended (`exits`) and none has come and gone for an interval. Both sides
  // store then load, sequentially consistent, so they never use the worker at once (which
  // UCS_THREAD_MODE_SERIALIZED asks; under MPI_THREAD_MULTIPLE the worker is thread-safe anyway).
  std::thread progressThread;
  std::atomic<bool> stopProgress{false};
  int wakeFd = -1;                        // eventfd: ends the thread's sleep at shutdown
  int workerFd = -1;                      // the worker's event fd (-1: poll on a timer)
  std::atomic<std::uint64_t> entries{0};  // uses of the worker by calls that began
  std::atomic<std::uint64_t> exits{0};    // and that ended (entries - exits: in progress)
  std::atomic<bool> threadTurn{false};    // the progress thread is using it

  ucp_ep_h endpoint(int worldRank, ucs_status_t* status) {
    std::lock_guard lock(mutex);
    if (endpoints[worldRank]) return endpoints[worldRank];
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                   UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.address = reinterpret_cast<const ucp_address_t*>(addresses[worldRank].data());
    // Peer-failure handling excludes UCX's shared-memory transports (posix, sysv, cma): it is
    // asked for only towards other hosts. A dead peer on this host is found by its process id
    // while we wait for it; a stopped one is the watchdog's (OVERPASS_TIMEOUT).
    p.err_mode =
        options.sameHost[worldRank] ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = onEndpointError;
    p.err_handler.arg = &peers[worldRank];
    *status = ucp_ep_create(worker, &p, &endpoints[worldRank]);
    if (*status != UCS_OK) endpoints[worldRank] = nullptr;
    return endpoints[worldRank];
  }

  void startProgressThread() {
    wakeFd = eventfd(0, EFD_CLOEXEC);
    if (ucp_worker_get_efd(worker, &workerFd) != UCS_OK) workerFd = -1;
    // The thread takes none of the application's signals.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    progressThread = std::thread([this] { progressLoop(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    // A program that calls exit() without MPI_Finalize must not leave the thread inside UCX while
    // UCX's libraries are torn down.
    static const bool registered = std::atexit(stopAtExit) == 0;
    (void)registered;
    live.store(this);
  }

  void stopProgressThread() {
    if (!progressThread.joinable()) return;
    stopProgress.store(true, std::memory_order_release);
    const std::uint64_t one = 1;
    if (write(wakeFd, &one, sizeof(one)) < 0) {
    }
    progressThread.join();
  }

  // The context whose progress thread runs (one per process), for stopAtExit.
  static inline std::atomic<Impl*> live{nullptr};
  static void stopAtExit() {
    if (Impl* impl = live.exchange(nullptr)) impl->stopProgressThread();
  }

  void progressLoop() {
    pollfd fds[2] = {{wakeFd, POLLIN, 0}, {workerFd, POLLIN, 0}};
    const nfds_t armed = workerFd >= 0 ? 2 : 1;
    std::uint64_t seen = exits.load(std::memory_order_acquire);
    while (!stopProgress.load(std::memory_order_acquire)) {
      // The calls progress the worker themselves: wait until none has used it for an interval.
      const std::uint64_t ended = exits.load(std::memory_order_acquire);
      if (ended != seen || entries.load(std::memory_order_seq_cst) != ended) {
        seen = ended;
        poll(fds, 1, kIdlePollMs);
        continue;
      }
      threadTurn.store(true, std::memory_order_seq_cst);
      bool rearm = false;
      if (entries.load(std::memory_order_seq_cst) == ended) {  // else a call has just begun
        // Until the worker is idle, or a call arrives (it waits for this turn to end).
        bool idle = false;
        while (!idle && entries.load(std::memory_order_seq_cst) == ended)
          idle = ucp_worker_progress(worker) == 0;
        rearm = !idle || (workerFd >= 0 && ucp_worker_arm(worker) == UCS_ERR_BUSY);
        threadTurn.store(false, std::memory_order_release);
        if (rearm) continue;
        poll(fds, armed, workerFd >= 0 ? kProgressSafetyMs : kIdlePollMs);
      } else {
        threadTurn.store(false, std::memory_order_release);
      }
    }
  }

  // A call's use of the worker, from construction to destruction (nested uses are allowed).
  struct Use {
    explicit Use(Impl& impl) : impl(impl) {
      impl.entries.fetch_add(1, std::memory_order_seq_cst);
      while (impl.threadTurn.load(std::memory_order_seq_cst)) sched_yield();
    }
    ~Use() { impl.exits.fetch_add(1, std::memory_order_release); }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    Impl& impl;
  };

  ~Impl() {
    Impl* self = this;
    live.compare_exchange_strong(self, nullptr);
    stopProgressThread();
    if (wakeFd >= 0) close(wakeFd);
    for (ucp_ep_h ep : endpoints) {
      if (!ep) continue;
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
      if (UCS_PTR_IS_PTR(request)) {
        while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker);
        ucp_request_free(request);
      }
    }
    if (worker) ucp_worker_destroy(worker);
    if (context) ucp_cleanup(context);
  }
};

UcxContext::UcxContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UcxContext::~UcxContext() = default;

void UcxContext::closing() {
  impl_->closing.store(true);
}

std::unique_ptr<UcxContext> UcxContext::create(const UcxOptions& options, Bootstrap& bootstrap,
                                               std::string* error) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->worldRank = bootstrap.rank();
  const int size = bootstrap.size();
  ucs_status_t status = UCS_OK;
  std::vector<char> mine, mineNet;
  // Every rank takes part in both allgathers below, even after a local failure, so that the
  // ranks can agree on the outcome.
  {
    ucp_config_t* config = nullptr;
    status = ucp_config_read(nullptr, nullptr, &config);  // the UCX_* variables apply
    if (status == UCS_OK && !options.rndvThresh.empty())
      status = ucp_config_modify(config, "RNDV_THRESH", options.rndvThresh.c_str());
    if (status == UCS_OK) {
      ucp_params_t params{};
      params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                          UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
      params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
      params.mt_workers_shared = options.multiThread ? 1 : 0;
      params.estimated_num_eps = static_cast<std::size_t>(size);
      status = ucp_init(&params, config, &impl->context);
    }
    if (config) ucp_config_release(config);
    if (status == UCS_OK) {
      ucp_worker_params_t wp{};
      wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
      // Below MPI_THREAD_MULTIPLE, calls may still come from different threads, one at a time;
      // the progress thread takes its turns between them (Impl::Use).
      wp.thread_mode = options.multiThread ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SERIALIZED;
      status = ucp_worker_create(impl->context, &wp, &impl->worker);
    }
    if (status == UCS_OK) status = workerAddress(impl->worker, /*netOnly=*/false, &mine);
    // Peers on other hosts get the address of the network transports only, as Open MPI's UCX
    // component publishes: shorter, and no shared-memory transport another host could try.
    if (status == UCS_OK && workerAddress(impl->worker, /*netOnly=*/true, &mineNet) != UCS_OK)
      mineNet = mine;
  }
  std::vector<std::vector<char>> full, net;
  if (allgatherRecords(bootstrap, status == UCS_OK ? mine : std::vector<char>{}, &full) !=
          Status::kOk ||
      allgatherRecords(bootstrap, status == UCS_OK ? mineNet : std::vector<char>{}, &net) !=
          Status::kOk) {
    *error = "cannot exchange UCX worker addresses";
    return nullptr;
  }
  if (status != UCS_OK) {
    *error = std::string("UCX could not start: ") + ucs_status_string(status);
    return nullptr;
  }
  impl->options.sameHost.resize(size, false);
  for (int r = 0; r < size; ++r) {
    if (full[r].empty() || net[r].empty()) {
      *error = "UCX could not start on world rank " + std::to_string(r);
      return nullptr;
    }
    impl->addresses.push_back(std::move(impl->options.sameHost[r] ? full[r] : net[r]));
  }
  impl->endpoints.assign(size, nullptr);
  impl->options.pids.resize(size, 0);
  impl->peers.reset(new PeerState[size]);
  for (int r = 0; r < size; ++r) {
    impl->peers[r].worldRank = r;
    impl->peers[r].closing = &impl->closing;
  }
  impl->startProgressThread();
  return std::unique_ptr<UcxContext>(new UcxContext(std::move(impl)));
}

Status UcxContext::connectAll(Bootstrap& bootstrap) {
  Impl& impl = *impl_;
  std::optional<Impl::Use> use(impl);  // not held in the bootstrap's calls below
  std::vector<void*> flushes;
  for (int r = 0; r < static_cast<int>(impl.endpoints.size()); ++r) {
    if (r == impl.worldRank) continue;
    ucs_status_t status = UCS_OK;
    ucp_ep_h ep = impl.endpoint(r, &status);
    if (!ep) {
      OVERPASS_ERROR("UCX: cannot connect to world rank %d: %s", r, ucs_status_string(status));
      return Status::kTransportError;
    }
    ucp_request_param_t param{};
    ucs_status_ptr_t request = ucp_ep_flush_nbx(ep, &param);
    if (UCS_PTR_IS_ERR(request)) return Status::kTransportError;
    if (request) flushes.push_back(request);
  }
  // The peers answer the wire-up while they flush too: everyone is here at once.
  for (void* request : flushes) {
    while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(impl.worker);
    ucp_request_free(request);
  }
  use.reset();
  // Warm the shared-memory FIFOs: their elements' pages are touched on first use, at ~15 us a
  // fault on these virtual machines; one round of messages through every element of each
  // same-host peer's FIFO moves that cost to start-up.
  std::vector<int> ranks(impl.endpoints.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int>(r);
  UcxTransport warm(*this, ranks, impl.worldRank, 0, "overpass warm-up");
  std::vector<char> out(kWarmMessageBytes), in(kWarmMessageBytes);
  std::vector<P2POp> ops;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    if (r == impl.worldRank || !impl.options.sameHost[r]) continue;
    ops.clear();
    for (int i = 0; i < kWarmMessages; ++i) {
      ops.push_back(P2POp::send(out.data(), out.size(), r));
      ops.push_back(P2POp::recv(in.data(), in.size(), r));
    }
    if (warm.exchange(ops, 0) != Status::kOk) return Status::kTransportError;
  }
  std::uint64_t done = 1;
  std::vector<std::uint64_t> all(bootstrap.size());
  return bootstrap.allgather(&done, all.data(), sizeof(done));
}

std::string UcxContext::describePath(int worldRank) {
  const Impl::Use use(*impl_);
  ucs_status_t status;
  ucp_ep_h ep = impl_->endpoint(worldRank, &status);
  if (!ep) return std::string("unreachable: ") + ucs_status_string(status);
  char* text = nullptr;
  std::size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  if (!f) return "?";
  ucp_ep_print_info(ep, f);
  std::fclose(f);
  // Lines such as "lane[0]:  8:posix/memory.0 md[4] ...": collect the transport/device names.
  std::set<std::string> names;
  for (const char* p = text; (p = std::strstr(p, "lane[")) != nullptr; ++p) {
    const char* colon = std::strchr(p, ':');
    if (!colon) break;
    const char* start = colon + 1;
    while (*start == ' ') ++start;
    const char* name = std::strchr(start, ':');  // after the resource index
    if (!name) break;
    ++name;
    const char* end = name;
    while (*end && *end != ' ' && *end != '.' && *end != '\n') ++end;
    names.emplace(name, end);
  }
  std::free(text);
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out.empty() ? "ucx" : out;
}

UcxTransport::UcxTransport(UcxContext& context, std::vector<int> worldRanks, int rank,
                           std::uint32_t commId, std::string name)
    : context_(context),
      worldRanks_(std::move(worldRanks)),
      rank_(rank),
      commId_(commId),
      name_(std::move(name)) {}

namespace {

// One posted operation; the completion callbacks fill it in.
// The callbacks may run on the progress thread: `done` is written last, with release order.
struct Completion {
  const P2POp* op = nullptr;
  void* request = nullptr;
  ucs_status_t status = UCS_OK;
  std::size_t length = 0;  // received bytes
  bool doneFlag = false;

  bool done() const {
    return std::atomic_ref(const_cast<bool&>(doneFlag)).load(std::memory_order_acquire);
  }
  void markDone() { std::atomic_ref(doneFlag).store(true, std::memory_order_release); }
};

void onSendDone(void*, ucs_status_t status, void* user) {
  auto* c = static_cast<Completion*>(user);
  c->status = status;
  c->markDone();
}

void onRecvDone(void*, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* c = static_cast<Completion*>(user);
  c->status = status;
  c->length = info ? info->length : 0;
  c->markDone();
}

// After a failure: cancels what can be cancelled (receives), waits briefly for the requests in
// flight and releases every request. Returns whether some request is still in flight (a send
// the peer never took), whose callback may yet write into `posted`.
bool cancelPending(UcxContext::Impl& impl, std::vector<Completion>& posted, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    if (!posted[i].done() && posted[i].request) ucp_request_cancel(impl.worker, posted[i].request);
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  for (std::size_t i = 0; i < count; ++i) {
    while (!posted[i].done() && posted[i].request && Clock::now() < deadline)
      ucp_worker_progress(impl.worker);
  }
  bool inFlight = false;
  for (std::size_t i = 0; i < count; ++i) {
    if (!posted[i].request) continue;
    inFlight = inFlight || !posted[i].done();
    ucp_request_free(posted[i].request);
  }
  return inFlight;
}

}  // namespace

std::string UcxTransport::describe(const P2POp& op, int tag) const {
  const bool send = op.kind == P2POp::Kind::kSend;
  return std::string(send ? "send of " : "receive of ") + std::to_string(op.bytes) + " bytes " +
         (send ? "to" : "from") + " rank " + std::to_string(op.peer) + " (world rank " +
         std::to_string(worldRanks_[op.peer]) + ") in " + collectiveOfTag(tag) +
         " on communicator '" + name_ + "'";
}

namespace {

// A batch in flight: copies of the operations and one completion each, at stable addresses for
// the callbacks. Kept alive (leaked) if a failure leaves a request in flight whose callback could
// still write into it.
struct UcxBatch final : Transport::Batch {
  std::vector<P2POp> ops;
  std::vector<Completion> posted;
  std::size_t count = 0;  // posted so far
  int tag = 0;
  std::string failure;
  Clock::time_point lastProgress = Clock::now();
  int idle = 0;

  std::size_t outstanding() const {  // not completed, or completed but not yet released
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i) n += !posted[i].done() || posted[i].request;
    return n;
  }
};

}  // namespace

Status UcxTransport::start(std::span<const P2POp> ops, int tag, Request* request) {
  UcxContext::Impl& impl = *context_.impl_;
  const UcxContext::Impl::Use use(impl);
  auto batch = std::make_unique<UcxBatch>();
  batch->ops.assign(ops.begin(), ops.end());
  batch->posted.resize(ops.size());
  batch->tag = tag;
  for (const P2POp& op : batch->ops) {
    Completion& c = batch->posted[batch->count];
    c.op = &op;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.user_data = &c;
    ucs_status_ptr_t ucxRequest;
    if (op.kind == P2POp::Kind::kRecv) {
      // Always a request, so that the callback reports the received length (UCX 1.13 leaves
      // recv_info unfilled on immediate completion).
      param.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
      param.cb.recv = onRecvDone;
      ucxRequest = ucp_tag_recv_nbx(impl.worker, op.buf, op.bytes,
                                    makeUcxTag(commId_, tag, op.peer), ~std::uint64_t{0}, &param);
    } else {
      ucs_status_t status = UCS_OK;
      ucp_ep_h ep = impl.endpoint(worldRanks_[op.peer], &status);
      if (!ep) {
        batch->failure = describe(op, tag) + ": no endpoint: " + ucs_status_string(status);
        break;
      }
      param.cb.send = onSendDone;
      ucxRequest = ucp_tag_send_nbx(ep, op.buf, op.bytes, makeUcxTag(commId_, tag, rank_), &param);
    }
    if (UCS_PTR_IS_ERR(ucxRequest)) {
      batch->failure = describe(op, tag) + ": " + ucs_status_string(UCS_PTR_STATUS(ucxRequest));
      break;
    }
    c.request = ucxRequest;
    ++batch->count;
    if (ucxRequest == nullptr) c.markDone();  // a send completed at once: no callback
    // else the callback may already have run inside the call: never reset `done`
  }
  *request = std::move(batch);
  if (static_cast<UcxBatch&>(**request).failure.empty()) return Status::kOk;
  bool done = false;
  return advance(*request, false, &done);  // reports the failure and releases what was posted
}

Status UcxTransport::test(Request& request, bool* done) {
  return advance(request, false, done);
}

Status UcxTransport::wait(Request& request) {
  bool done = false;
  return advance(request, true, &done);
}

Status UcxTransport::advance(Request& request, bool block, bool* done) {
  UcxContext::Impl& impl = *context_.impl_;
  const UcxContext::Impl::Use use(impl);
  auto& b = static_cast<UcxBatch&>(*request);
  auto finish = [&](Completion& c) {
    if (!b.failure.empty()) return;
    if (c.status != UCS_OK && c.status != UCS_ERR_CANCELED)
      b.failure = describe(*c.op, b.tag) + ": " + ucs_status_string(c.status);
    else if (c.op->kind == P2POp::Kind::kRecv && c.length != c.op->bytes)
      b.failure = describe(*c.op, b.tag) + ": " + std::to_string(c.length) + " bytes arrived";
  };
  std::size_t remaining = b.outstanding() + 1;  // +1: the first pass always counts as progress
  Status status = Status::kOk;
  for (;;) {
    for (std::size_t i = 0; i < b.count; ++i) {
      Completion& c = b.posted[i];
      if (!c.done() || !c.op) continue;  // still running, or already finished
      finish(c);
      if (c.request) ucp_request_free(c.request);
      c.request = nullptr;
      c.op = nullptr;  // finished
    }
    if (!b.failure.empty()) {
      status = Status::kTransportError;
      break;
    }
    const std::size_t now = b.outstanding();
    if (now == 0) break;
    if (now < remaining) {
      remaining = now;
      b.lastProgress = Clock::now();
      b.idle = 0;
      noteProgress();
    }
    if (ucp_worker_progress(impl.worker) != 0) continue;
    if (!block) {
      *done = false;
      return Status::kOk;
    }
    // Nothing moved: back off (common/progress.h), and give the core away only where ranks
    // outnumber cores, then at once (shim/pmpi_transport.cc says why not elsewhere).
    ++b.idle;
    idle(impl.options.oversubscribed);
    const double waited = std::chrono::duration<double>(Clock::now() - b.lastProgress).count();
    // Peers on other hosts that fail are reported by UCX (peer error handling); a peer on this
    // host is watched by its process id while we wait for it.
    if ((b.idle & 4095) == 0 && waited > kLivenessCheckSeconds) {
      for (std::size_t i = 0; i < b.count && b.failure.empty(); ++i) {
        if (b.posted[i].done()) continue;
        const P2POp& op = b.ops[i];
        const int pid = impl.options.pids[worldRanks_[op.peer]];
        if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
          b.failure = describe(op, b.tag) + ": the peer (process " + std::to_string(pid) +
                      " on this host) has exited";
      }
    }
  }
  *done = true;
  if (status != Status::kOk) {
    OVERPASS_ERROR("transport error: %s", b.failure.c_str());
    if (cancelPending(impl, b.posted, b.count)) {
      (void)request.release();  // a callback may still write into it
      return status;
    }
  }
  request.reset();
  return status;
}

}  // namespace overpass
