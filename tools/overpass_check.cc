// overpass-check: the connectivity and bandwidth test to run before a job, in the manner of
// hccl_test or ib_write_bw. A plain MPI program (it links only MPI, and uses only point-to-point
// calls, so it runs the same with or without liboverpass.so preloaded): it groups the ranks by
// host, measures every rank's path to its host's first rank (shared memory within a host) and
// every pair of hosts (one rank per host: latency by ping-pong, bandwidth one way and the other),
// prints latency and bandwidth matrices by host name and transport, names unreachable and slow
// pairs, and exits 0 only when all is well.
//
// Nothing in it can hang on a dead link: every call is nonblocking and every wait has a deadline
// (MPI_Test in a loop). Rank 0 coordinates: every rank says hello to it with its host name; rank 0
// sends each test to its two ranks (who acknowledge it at once) and collects both sides'
// results; a rank that does not acknowledge within --pair-timeout is not sent anything again; a
// side whose peer stops answering for --pair-timeout reports it. At the end, ranks that do not
// answer rank 0 are probed by the other hosts, so the report can tell a dead host from a broken
// path. When every rank answered, the job ends with MPI_Finalize and the exit code; otherwise rank
// 0 prints what it knows and calls MPI_Abort (MPI_Finalize would wait for the lost ranks). A rank
// that hears nothing from rank 0 for longer than the check can last ends the job itself.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tools/size_text.h"

namespace overpass::check {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitSlow = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;

// Tags on MPI_COMM_WORLD (the tool makes no communicator: MPI_Comm_dup would be a blocking
// collective). Test k uses kTagFirstTest + 2k for its traffic and the next tag for its results,
// so that a late message of an abandoned test can never match another test's receive.
constexpr int kTagHello = 1;
constexpr int kTagCommand = 2;
constexpr int kTagAck = 3;
constexpr int kTagProbe = 4;
constexpr int kTagProbeReply = 5;
constexpr int kTagFinishAck = 6;
constexpr int kTagHeartbeat = 7;
constexpr int kTagWelcome = 8;
constexpr int kTagFirstTest = 100;

constexpr int kLatencyWarmup = 10;         // round trips before the timed ones
constexpr double kLatencyBudget = 1.0;     // seconds of timed round trips at most
constexpr double kBandwidthBudget = 2.0;   // seconds of timed messages per direction at most
constexpr double kIdleSleepMin = 50e-6;    // between polls while waiting for instructions: from
constexpr double kIdleSleepMax = 2e-3;     // this, doubling up to this
constexpr double kSpinBeforeYield = 5e-6;  // seconds a test's wait polls before it yields the CPU
constexpr double kRetestRange = 4.0;       // a slow result within this factor of the limit is
                                           // measured again before it is reported
constexpr double kBusyWait = 0.2;  // of a test's time waiting for a CPU: the machine was busy
constexpr double kMostWaitCredited = 0.75;  // a bandwidth is judged by the time its sides had a
                                            // CPU, crediting at most this share of waiting (4x)
constexpr int kRetests = 2;
constexpr double kProbeWait = 1.0;  // a rank waiting for instructions answers a probe at once //
                                    // passes of measuring slow results again
constexpr int kMaxIfaces = 8;
constexpr int kMaxProbeTargets = 16;
constexpr std::size_t kKiB = 1024;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds this thread has spent runnable but waiting for a CPU (the scheduler's run delay, in
// /proc/thread-self/schedstat); negative where the kernel does not say.
double cpuWaitSeconds() {
  std::ifstream in("/proc/thread-self/schedstat");
  unsigned long long running = 0, waiting = 0;
  if (!(in >> running >> waiting)) return -1;
  return static_cast<double>(waiting) * 1e-9;
}

void sleepFor(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Sleeps between the polls of an idle wait, longer and longer: idle ranks leave the CPU to the two
// ranks of the test in progress (machines where ranks outnumber cores).
class Backoff {
 public:
  void wait() {
    sleepFor(delay_);
    delay_ = std::min(2 * delay_, kIdleSleepMax);
  }

 private:
  double delay_ = kIdleSleepMin;
};

// ---------------------------------------------------------------------------------------------
// Ending the job. MPI_Abort needs the launcher to reach every host; where it cannot, the process
// ends itself a few seconds later (the launcher may then wait for the lost hosts on its own).

volatile sig_atomic_t gExitCode = kExitUnreachable;

void exitOnAlarm(int) {
  static const char msg[] = "overpass-check: the end of the job stalled; exiting\n";
  const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(gExitCode);
}

void armExitTimer(int code, unsigned seconds) {
  gExitCode = code;
  struct sigaction sa = {};
  sa.sa_handler = exitOnAlarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  alarm(seconds);
}

[[noreturn]] void abortJob(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  armExitTimer(code, 5);
  MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

// ---------------------------------------------------------------------------------------------
// Messages (fixed-size structs sent as bytes: every rank runs this same binary).

struct Iface {
  char name[IFNAMSIZ];
  std::uint32_t addr;  // network byte order
  std::uint32_t mask;
};

struct Hello {
  char host[MPI_MAX_PROCESSOR_NAME];
  char bootId[48];
  std::int32_t pid;
  std::int32_t nIfaces;
  Iface ifaces[kMaxIfaces];
};

enum class CommandKind : std::int32_t { kTest = 1, kProbe = 2, kFinish = 3 };

struct Command {
  CommandKind kind;
  std::int32_t id;         // test id (tags), or the exit code for kFinish
  std::int32_t peer;       // kTest: the other rank
  std::int32_t initiator;  // kTest: 1 if this rank starts the ping-pong and sends first
  std::int32_t nTargets;   // kProbe
  std::int32_t aborting;   // kFinish: rank 0 ends the job with MPI_Abort (some ranks are lost)
  std::int32_t targets[kMaxProbeTargets];
};

enum class SideStatus : std::int32_t { kOk = 0, kPeerSilent = 1, kDeadline = 2, kError = 3 };

// What one side of a test measured: the initiator the latency and its own sending bandwidth, the
// responder its own sending bandwidth. phase: where a failure happened (1 latency, 2 this side
// sending, 3 this side receiving); messages: how many of that phase completed before it.
struct SideResult {
  std::int32_t id;
  SideStatus status;
  std::int32_t phase;
  std::int32_t messages;
  std::int32_t latencyCount;
  std::int32_t bandwidthCount;
  double latencyUs;      // half the median round trip
  double latencyBestUs;  // half the shortest
  double bandwidth;      // bytes per second: the median of the timed messages
  double bandwidthBest;  // the fastest of them
  // The share of the ping-pong's, this side's sending and receiving time that this rank's thread
  // spent waiting for a CPU (other programs, more ranks than cores): such waits slow the figures
  // without any fault of the path. Negative: unknown.
  float waitLatency;
  float waitSend;
  float waitReceive;
  std::int32_t reached[kMaxProbeTargets];  // kProbe: 1 where the target answered
};

// ---------------------------------------------------------------------------------------------
// Waiting with a deadline.

int tagUb() {
  int* value = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag);
  return flag && value ? *value : 32767;
}

int testTag(int id) {
  static const int span = (tagUb() - kTagFirstTest) / 2;
  return kTagFirstTest + 2 * (id % span);
}

enum class Poll { kSpin, kIdle };

// Waits until every request has completed (true) or until `deadline` (false, the requests left
// as they are). kSpin polls (yielding after a while, for machines where ranks outnumber cores);
// kIdle sleeps between polls. `tick`, if any, runs between polls.
using Tick = std::function<void()>;

bool waitAll(MPI_Request* reqs, int n, double deadline, Poll poll, const Tick& tick = {}) {
  const double start = now();
  Backoff idle;
  for (;;) {
    int done = 0;
    if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return false;
    if (done) return true;
    if (now() >= deadline) return false;
    if (tick) tick();
    if (poll == Poll::kIdle) {
      idle.wait();
    } else if (now() - start > kSpinBeforeYield) {
      sched_yield();
    }
  }
}

void dropRecv(MPI_Request& r) {
  if (r == MPI_REQUEST_NULL) return;
  MPI_Cancel(&r);
  MPI_Request_free(&r);
}

void dropSend(MPI_Request& r) {
  if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

// Messages whose buffers must outlive a send that may never complete (to a lost rank): kept
// until the process ends.
class Outbox {
 public:
  template <typename T>
  void send(const T& message, int dest, int tag) {
    prune();
    Slot& slot = slots_.emplace_back();
    slot.bytes.resize(sizeof(T));
    std::memcpy(slot.bytes.data(), &message, sizeof(T));
    if (MPI_Isend(slot.bytes.data(), static_cast<int>(sizeof(T)), MPI_BYTE, dest, tag,
                  MPI_COMM_WORLD, &slot.request) != MPI_SUCCESS)
      slots_.pop_back();
  }

 private:
  struct Slot {
    std::vector<char> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Forgets the messages that have left.
  void prune() {
    for (auto it = slots_.begin(); it != slots_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? slots_.erase(it) : std::next(it);
    }
  }

  std::list<Slot> slots_;
};

// ---------------------------------------------------------------------------------------------
// Options.

struct Options {
  double timeout = 30;
  double pairTimeout = 5;
  double slowFactor = 0.5;
  double latencyFactor = 3;
  double minBandwidth = 0;  // MB/s, 0: off
  double maxLatency = 0;    // us, 0: off
  std::string sizeText = "4M";
  std::size_t size = 4 * kKiB * kKiB;
  int reps = 5;
  int latencyIters = 100;
  std::string schedule = "auto";
  bool noShm = false;
  double startDelay = 0;
  std::string jsonPath;
  bool verbose = false;
};

// How long a prober waits for a rank that stopped answering rank 0.
double probeWait(const Options& o) {
  return std::min(o.pairTimeout, kProbeWait);
}

std::optional<int> parseOptions(int argc, char** argv, int rank, Options& o) {
  CLI::App app{
      "overpass-check: connectivity and bandwidth test of the hosts of an MPI job, to run before "
      "the job (mpirun -np N --map-by ... overpass-check). Groups the ranks by host, measures "
      "every rank's path to its host's first rank (shared memory) and every pair of hosts (one "
      "rank per host; latency by ping-pong, bandwidth each way), prints latency and bandwidth "
      "matrices by host and transport, and names unreachable and slow pairs. Every wait has a "
      "deadline: it ends within --timeout even when a host is unreachable. Exit status: 0 all "
      "well, 1 slow paths, 2 bad arguments, 3 unreachable ranks or hosts, or the check did not "
      "complete within --timeout (the job is then ended with MPI_Abort).",
      "overpass-check"};
  app.add_option("-t,--timeout", o.timeout,
                 "Seconds the whole check may take (after --start-delay); tests not done by then "
                 "are reported as not run")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--pair-timeout", o.pairTimeout,
                 "Seconds without progress after which a peer counts as unreachable (a rank that "
                 "does not acknowledge an instruction, a test's message that does not arrive)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--slow-factor", o.slowFactor,
                 "A path is slow when even the fastest of its bandwidth messages (in either "
                 "direction) is below this times the reference: for host pairs the median over "
                 "hosts of each host's fastest pair, for shared memory the median of all ranks' "
                 "paths; counting only the time the sides had a CPU (up to 4x); slow figures "
                 "near the limit are measured again first")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--latency-factor", o.latencyFactor,
                 "A path is slow when its latency is above this times the reference (as for "
                 "--slow-factor, with each host's lowest latency); 0: off")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--min-bandwidth", o.minBandwidth,
                 "Also slow: a host pair below this many MB/s (10^6 bytes/s) in either "
                 "direction; 0: off")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--max-latency", o.maxLatency,
                 "Also slow: a host pair whose latency is above this many microseconds; 0: off")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("-b,--size", o.sizeText,
                 "Bytes per bandwidth message (K/M/G suffixes: x1024), 8 B to 1 GiB")
      ->capture_default_str();
  app.add_option("-r,--reps", o.reps,
                 "Timed bandwidth messages per direction (the median is reported; fewer when they "
                 "take more than 2 s)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--lat-iters", o.latencyIters,
                 "Timed ping-pong round trips of 8 B (the median is reported; fewer when they take "
                 "more than 1 s)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  app.add_option("--schedule", o.schedule,
                 "parallel: disjoint host pairs at once (round-robin rounds) and every host's "
                 "shared-memory tests at once; serial: one test at a time; auto: serial when "
                 "hosts share one kernel (network namespaces or containers on one machine), else "
                 "parallel")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "parallel", "serial"}));
  app.add_flag("--no-shm", o.noShm, "Skip the shared-memory tests within each host");
  app.add_option("--start-delay", o.startDelay,
                 "Seconds to wait after the hosts are known, before the tests")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--json", o.jsonPath, "Also write the results as JSON to this file (rank 0)");
  app.add_flag("-v,--verbose", o.verbose, "One line per test as it completes");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) {
      const int rc = app.exit(e);
      return rc == 0 ? 0 : kExitUsage;
    }
    return e.get_exit_code() == 0 ? 0 : kExitUsage;
  }
  std::string error;
  const auto size = tools::parseSizeText(o.sizeText);
  if (!size) {
    error = "--size: '" + o.sizeText +
            "' is not a size (a whole number of bytes, optionally with a K, M or G suffix: x1024)";
  } else if (*size < 8 || *size > kKiB * kKiB * kKiB) {
    error = "--size " + o.sizeText + " is outside 8 B to 1 GiB";
  } else if (o.timeout < 2 * o.pairTimeout + 2) {
    error = "--timeout " + CLI::detail::to_string(o.timeout) + " is too short for --pair-timeout " +
            CLI::detail::to_string(o.pairTimeout) +
            ": it must be at least twice --pair-timeout plus 2 s";
  }
  if (!error.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "overpass-check: %s\nRun with --help for more information.\n",
                   error.c_str());
    return kExitUsage;
  }
  o.size = *size;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// One side of a test between two ranks: latency by ping-pong (the initiator times round trips),
// then the initiator streams messages to the responder, each acknowledged (the sender times
// from its send to the acknowledgement), then the other way. Each wait ends after
// --pair-timeout without progress.

class PairTest {
 public:
  PairTest(const Options& o, int peer, int tag, double hardDeadline, std::vector<char>& buffer,
           const Tick& tick)
      : o_(o), peer_(peer), tag_(tag), hard_(hardDeadline), buffer_(buffer), tick_(tick) {}

  SideResult run(bool initiator, int id) {
    result_ = {};
    result_.id = id;
    if (!phase(initiator ? &PairTest::pingInitiator : &PairTest::pingResponder,
               result_.waitLatency))
      return result_;
    if (initiator) {
      if (!phase(&PairTest::sendStream, result_.waitSend)) return result_;
      phase(&PairTest::receiveStream, result_.waitReceive);
    } else {
      if (!phase(&PairTest::receiveStream, result_.waitReceive)) return result_;
      phase(&PairTest::sendStream, result_.waitSend);
    }
    return result_;
  }

  // The buffer had a receive pending when a test was abandoned: it may still be written into.
  bool poisoned() const { return poisoned_; }

 private:
  // Runs one phase, and measures the share of its time this thread waited for a CPU.
  bool phase(bool (PairTest::*step)(), float& wait) {
    const double wall = now();
    const double waited = cpuWaitSeconds();
    const bool ok = (this->*step)();
    const double elapsed = std::max(now() - wall, 1e-9);
    const double after = cpuWaitSeconds();
    wait = waited < 0 || after < 0
               ? -1.0f
               : static_cast<float>(std::clamp((after - waited) / elapsed, 0.0, 1.0));
    return ok;
  }

  bool fail(int phase, int messages) {
    result_.status = now() >= hard_ ? SideStatus::kDeadline : SideStatus::kPeerSilent;
    result_.phase = phase;
    result_.messages = messages;
    return false;
  }

  // Posts the receive (if any), then the send (if any), and waits for both.
  bool exchange(const void* sendBuf, int sendBytes, void* recvBuf, int recvBytes) {
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    bool posted = true;
    if (recvBuf)
      posted = MPI_Irecv(recvBuf, recvBytes, MPI_BYTE, peer_, tag_, MPI_COMM_WORLD, &r[0]) ==
               MPI_SUCCESS;
    if (posted && sendBuf)
      posted = MPI_Isend(sendBuf, sendBytes, MPI_BYTE, peer_, tag_, MPI_COMM_WORLD, &r[1]) ==
               MPI_SUCCESS;
    if (posted && waitAll(r, 2, std::min(now() + o_.pairTimeout, hard_), Poll::kSpin, tick_))
      return true;
    if (r[0] != MPI_REQUEST_NULL && recvBytes > 64) poisoned_ = true;
    dropRecv(r[0]);
    dropSend(r[1]);
    return false;
  }

  bool pingInitiator() {
    std::int32_t ping[2];
    std::int32_t pong[2];
    std::vector<double> rtts;
    const double start = now();
    for (int i = 0;; ++i) {
      const bool timed = i >= kLatencyWarmup;
      const bool last = timed && (static_cast<int>(rtts.size()) + 1 >= o_.latencyIters ||
                                  now() - start >= kLatencyBudget);
      ping[0] = i;
      ping[1] = last ? 0 : 1;
      const double t = now();
      if (!exchange(ping, sizeof ping, pong, sizeof pong)) return fail(1, i);
      if (timed) rtts.push_back(now() - t);
      if (last) break;
    }
    std::sort(rtts.begin(), rtts.end());
    result_.latencyUs = median(rtts) / 2 * 1e6;
    result_.latencyBestUs = rtts.empty() ? 0 : rtts.front() / 2 * 1e6;
    result_.latencyCount = static_cast<int>(rtts.size());
    return true;
  }

  bool pingResponder() {
    std::int32_t ping[2];
    for (int i = 0;; ++i) {
      if (!exchange(nullptr, 0, ping, sizeof ping)) return fail(1, i);
      if (!exchange(ping, sizeof ping, nullptr, 0)) return fail(1, i);
      if (ping[1] == 0) return true;
    }
  }

  // Message 0 is a warm-up; the first int of each message says whether another follows.
  bool sendStream() {
    std::vector<double> rates;
    std::int32_t ack = 0;
    const double start = now();
    const int bytes = static_cast<int>(o_.size);
    for (int k = 0;; ++k) {
      const bool timed = k >= 1;
      const bool last = timed && (static_cast<int>(rates.size()) + 1 >= o_.reps ||
                                  now() - start >= kBandwidthBudget);
      const std::int32_t more = last ? 0 : 1;
      std::memcpy(buffer_.data(), &more, sizeof more);
      const double t = now();
      if (!exchange(buffer_.data(), bytes, &ack, sizeof ack)) return fail(2, k);
      if (timed) rates.push_back(static_cast<double>(o_.size) / (now() - t));
      if (last) break;
    }
    std::sort(rates.begin(), rates.end());
    result_.bandwidth = median(rates);
    result_.bandwidthBest = rates.empty() ? 0 : rates.back();
    result_.bandwidthCount = static_cast<int>(rates.size());
    return true;
  }

  bool receiveStream() {
    const std::int32_t ack = 1;
    const int bytes = static_cast<int>(o_.size);
    for (int k = 0;; ++k) {
      if (!exchange(nullptr, 0, buffer_.data(), bytes)) return fail(3, k);
      std::int32_t more = 0;
      std::memcpy(&more, buffer_.data(), sizeof more);
      if (!exchange(&ack, sizeof ack, nullptr, 0)) return fail(3, k);
      if (more == 0) return true;
    }
  }

  static double median(const std::vector<double>& sorted) {
    if (sorted.empty()) return 0;
    const std::size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  const Options& o_;
  int peer_;
  int tag_;
  double hard_;
  std::vector<char>& buffer_;
  const Tick& tick_;
  SideResult result_{};
  bool poisoned_ = false;
};

// The bandwidth buffer of this rank; replaced (the old one left to the abandoned receive) after
// a test that may still write into it.
class TestRunner {
 public:
  explicit TestRunner(const Options& o) : o_(o) { newBuffer(); }

  SideResult run(int peer, bool initiator, int id, double hardDeadline, const Tick& tick = {}) {
    PairTest test(o_, peer, testTag(id), hardDeadline, *buffer_, tick);
    SideResult r = test.run(initiator, id);
    if (test.poisoned()) newBuffer();
    return r;
  }

 private:
  void newBuffer() {
    buffers_.emplace_back(o_.size, 0);
    buffer_ = &buffers_.back();
  }

  const Options& o_;
  std::deque<std::vector<char>> buffers_;
  std::vector<char>* buffer_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// What the rank knows about itself.

std::string readBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

Hello makeHello() {
  Hello h = {};
  int len = 0;
  MPI_Get_processor_name(h.host, &len);
  h.host[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  const std::string boot = readBootId();
  std::snprintf(h.bootId, sizeof h.bootId, "%s", boot.c_str());
  h.pid = static_cast<std::int32_t>(getpid());
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a && h.nIfaces < kMaxIfaces; a = a->ifa_next) {
      if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_netmask) continue;
      if (!(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK)) continue;
      Iface& f = h.ifaces[h.nIfaces++];
      std::snprintf(f.name, sizeof f.name, "%s", a->ifa_name);
      f.addr = reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr;
      f.mask = reinterpret_cast<sockaddr_in*>(a->ifa_netmask)->sin_addr.s_addr;
    }
    freeifaddrs(list);
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// Which transport carries the traffic, as far as can be said cheaply: Open MPI's selected PML
// (read from the component it selected, after checking that the memory looks like an Open MPI
// component of framework "pml") and its btl and btl_tcp_if_* settings through MPI_T.

std::string openMpiPml() {
  const char* base =
      static_cast<const char*>(dlsym(RTLD_DEFAULT, "mca_pml_base_selected_component"));
  if (!base) return "";
  // struct mca_base_component_2_1_0_t: 3 ints, project name[16], 3 ints, type name[32], 3 ints,
  // component name[64].
  constexpr std::size_t kProject = 12, kType = 40, kComponent = 84, kComponentLen = 64;
  if (std::strncmp(base + kProject, "ompi", 16) != 0 || std::strncmp(base + kType, "pml", 32) != 0)
    return "";
  const char* name = base + kComponent;
  const std::size_t len = strnlen(name, kComponentLen);
  if (len == 0 || len == kComponentLen) return "";
  for (std::size_t i = 0; i < len; ++i)
    if (!(std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_')) return "";
  return std::string(name, len);
}

// The value of an Open MPI string control variable (only these few names, read where the library
// is Open MPI: some of its aliases crash MPI_T_cvar_read).
std::optional<std::string> readCvar(const char* name) {
  int index = -1;
  if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return std::nullopt;
  char cvarName[256];
  char desc[256];
  int nameLen = sizeof cvarName;
  int descLen = sizeof desc;
  int verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  if (MPI_T_cvar_get_info(index, cvarName, &nameLen, &verbosity, &type, &enumtype, desc, &descLen,
                          &bind, &scope) != MPI_SUCCESS ||
      type != MPI_CHAR)
    return std::nullopt;
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return std::nullopt;
  std::optional<std::string> value;
  if (count >= 0 && count < 65536) {
    std::vector<char> text(static_cast<std::size_t>(count) + 1, '\0');
    if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS) value = std::string(text.data());
  }
  MPI_T_cvar_handle_free(&handle);
  return value;
}

struct MpiInfo {
  std::string library;  // first line of MPI_Get_library_version
  bool openMpi = false;
  std::string pml;
  std::string btl;  // the btl selection as set ("" = every component)
  std::string tcpInclude;
  std::string tcpExclude;
  std::string componentPath;
};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

// Whether Open MPI's component selection string (a list, or ^list to exclude) allows `name`.
bool selectionAllows(const std::string& selection, const std::string& name) {
  if (selection.empty()) return true;
  const bool exclude = selection[0] == '^';
  const auto items = splitList(exclude ? selection.substr(1) : selection);
  const bool listed = std::find(items.begin(), items.end(), name) != items.end();
  return exclude ? !listed : listed;
}

MpiInfo probeMpi() {
  MpiInfo m;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  m.library = std::string(version, strnlen(version, sizeof version));
  m.library = m.library.substr(0, m.library.find_first_of("\n,"));
  m.openMpi = m.library.find("Open MPI") != std::string::npos;
  if (!m.openMpi) return m;
  m.pml = openMpiPml();
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
    m.btl = readCvar("btl").value_or("");
    m.tcpInclude = readCvar("btl_tcp_if_include").value_or("");
    m.tcpExclude = readCvar("btl_tcp_if_exclude").value_or("");
    m.componentPath = readCvar("mca_base_component_path").value_or("");
    MPI_T_finalize();
  }
  return m;
}

// Whether Open MPI's component framework_name is installed: its plugin in one of the folders of
// mca_base_component_path (true where the path is unknown, or a folder cannot be read: the
// component may be built into the library).
bool componentInstalled(const std::string& componentPath, const char* framework, const char* name) {
  std::size_t start = 0;
  bool anyFolder = false;
  while (start <= componentPath.size()) {
    const std::size_t colon = std::min(componentPath.find(':', start), componentPath.size());
    const std::string dir = componentPath.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty() || access(dir.c_str(), R_OK) != 0) continue;
    anyFolder = true;
    const std::string plugin = dir + "/mca_" + framework + "_" + name + ".so";
    if (access(plugin.c_str(), F_OK) == 0) return true;
  }
  return !anyFolder;
}

bool cidrMatch(const std::string& cidr, std::uint32_t addr) {
  const std::size_t slash = cidr.find('/');
  if (slash == std::string::npos) return false;
  in_addr net{};
  if (inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &net) != 1) return false;
  const int bits = std::atoi(cidr.c_str() + slash + 1);
  if (bits < 0 || bits > 32) return false;
  const std::uint32_t mask = bits == 0 ? 0 : htonl(~std::uint32_t{0} << (32 - bits));
  return (net.s_addr & mask) == (addr & mask);
}

// The interfaces Open MPI's TCP BTL would use (btl_tcp_if_include, else btl_tcp_if_exclude:
// interface names or CIDR ranges).
bool tcpAllows(const MpiInfo& m, const Iface& f) {
  const auto matches = [&](const std::string& list) {
    for (const std::string& item : splitList(list))
      if (item == f.name || cidrMatch(item, f.addr)) return true;
    return false;
  };
  if (!m.tcpInclude.empty()) return matches(m.tcpInclude);
  return !matches(m.tcpExclude);
}

std::string ipv4(std::uint32_t addr) {
  char text[INET_ADDRSTRLEN] = "";
  in_addr a{};
  a.s_addr = addr;
  inet_ntop(AF_INET, &a, text, sizeof text);
  return text;
}

int prefixLength(std::uint32_t mask) {
  return __builtin_popcount(ntohl(mask));
}

// ---------------------------------------------------------------------------------------------
// Rank 0: the plan, the rounds, the report.

enum class TestState { kPending, kOk, kUnreachable, kNoAnswer, kNotRun };

struct Test {
  int id = 0;
  bool shm = false;
  int a = 0;  // initiator
  int b = 0;  // responder
  int hostA = 0;
  int hostB = 0;
  TestState state = TestState::kPending;
  SideResult sideA{};
  SideResult sideB{};
  std::string why;
  bool retested = false;
  SideResult firstA{};  // before a retest
  SideResult firstB{};
  // Verdicts.
  bool slowLatency = false;
  bool slowAB = false;
  bool slowBA = false;
  bool slow() const { return slowLatency || slowAB || slowBA; }
  // The largest share of a figure's time that one of its sides waited for a CPU.
  double waitLatency() const { return std::max(sideA.waitLatency, sideB.waitLatency); }
  double waitAB() const { return std::max(sideA.waitSend, sideB.waitReceive); }
  double waitBA() const { return std::max(sideB.waitSend, sideA.waitReceive); }
  double waitMax() const { return std::max({waitLatency(), waitAB(), waitBA()}); }
  // A direction's fastest message as the path carries it with a CPU at hand: its sides waited
  // for one for a share of the phase (other programs, more ranks than cores), and moved the
  // bytes in the rest. The verdicts judge these; the report prints what was measured.
  double judgedAB() const { return credited(sideA.bandwidthBest, waitAB()); }
  double judgedBA() const { return credited(sideB.bandwidthBest, waitBA()); }
  static double credited(double bandwidth, double wait) {
    return wait > 0 ? bandwidth / (1 - std::min(wait, kMostWaitCredited)) : bandwidth;
  }
};

struct HostInfo {
  std::string name;
  std::string key;
  std::vector<int> ranks;
  int leader = 0;
  std::vector<Iface> ifaces;
  bool leaderAnswers = true;
};

// "0-3,5,7-8"
std::string rankList(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string formatMBps(double bytesPerSecond) {
  const double v = bytesPerSecond / 1e6;
  char text[32];
  std::snprintf(text, sizeof text, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return text;
}

std::string formatUs(double us) {
  char text[32];
  std::snprintf(text, sizeof text, us >= 100 ? "%.0f" : us >= 10 ? "%.1f" : "%.2f", us);
  return text;
}

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string formatBytes(std::size_t bytes) {
  if (bytes >= kKiB * kKiB && bytes % (kKiB * kKiB) == 0)
    return std::to_string(bytes / (kKiB * kKiB)) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string formatFactor(double f) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", f);
  return text;
}

std::string formatSeconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class Coordinator {
 public:
  Coordinator(const Options& o, int np, double start)
      : o_(o), np_(np), start_(start), runner_(o), answers_(static_cast<std::size_t>(np), true) {
    // Tests are scheduled until this moment; what remains of --timeout is for the end (the
    // acknowledgements of the end, the report).
    end_ = start_ + o_.startDelay + o_.timeout;
    schedDeadline_ = end_ - o_.pairTimeout - 1.5;
  }

  int run() {
    gatherHellos();
    mpi_ = probeMpi();
    groupHosts();
    printHeader();
    if (o_.startDelay > 0) sleepFor(o_.startDelay);
    if (!o_.noShm) runShmTests();
    runNetworkTests();
    classify();
    retestMarginal();
    probeLostRanks();
    endExchange();
    const int code = exitCode();
    report(code);
    return end(code);
  }

 private:
  // --- start: hellos and hosts ---------------------------------------------------------------

  void gatherHellos() {
    hellos_.assign(static_cast<std::size_t>(np_), Hello{});
    heard_.assign(static_cast<std::size_t>(np_), false);
    hellos_[0] = makeHello();
    heard_[0] = true;
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(np_), MPI_REQUEST_NULL);
    for (int r = 1; r < np_; ++r)
      MPI_Irecv(&hellos_[static_cast<std::size_t>(r)], sizeof(Hello), MPI_BYTE, r, kTagHello,
                MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(r)]);
    const double deadline = now() + std::max(o_.pairTimeout, 10.0);
    Backoff idle;
    for (;;) {
      bool all = true;
      for (int r = 1; r < np_; ++r) {
        auto& req = reqs[static_cast<std::size_t>(r)];
        if (req == MPI_REQUEST_NULL) continue;
        int done = 0;
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
          heard_[static_cast<std::size_t>(r)] = true;
        else
          all = false;
      }
      if (all || now() >= deadline) break;
      idle.wait();
    }
    for (int r = 1; r < np_; ++r) {
      if (heard_[static_cast<std::size_t>(r)]) continue;
      dropRecv(reqs[static_cast<std::size_t>(r)]);
      answers_[static_cast<std::size_t>(r)] = false;
      unheard_.push_back(r);
    }
    helloSeconds_ = now() - start_;
    for (int r = 1; r < np_; ++r)
      if (heard_[static_cast<std::size_t>(r)]) outbox_.send(hellos_[0].host, r, kTagWelcome);
  }

  void groupHosts() {
    std::map<std::string, int> byKey;
    std::map<std::string, int> nameUses;
    hostOf_.assign(static_cast<std::size_t>(np_), -1);
    for (int r = 0; r < np_; ++r) {
      if (!heard_[static_cast<std::size_t>(r)]) continue;
      const Hello& h = hellos_[static_cast<std::size_t>(r)];
      const std::string name(h.host, strnlen(h.host, sizeof h.host));
      const std::string key =
          name + "\n" + std::string(h.bootId, strnlen(h.bootId, sizeof h.bootId));
      auto it = byKey.find(key);
      if (it == byKey.end()) {
        HostInfo host;
        const int uses = ++nameUses[name];
        host.name = uses == 1 ? name : name + "#" + std::to_string(uses);
        host.key = key;
        host.leader = r;
        host.ifaces.assign(h.ifaces, h.ifaces + std::clamp(h.nIfaces, 0, kMaxIfaces));
        it = byKey.emplace(key, static_cast<int>(hosts_.size())).first;
        hosts_.push_back(host);
      }
      hosts_[static_cast<std::size_t>(it->second)].ranks.push_back(r);
      hostOf_[static_cast<std::size_t>(r)] = it->second;
    }
    // Hosts that report the same boot id run on one kernel (the rig's network namespaces,
    // containers on one machine): their tests would compete for the same CPUs and memory.
    std::set<std::string> boots;
    for (const HostInfo& host : hosts_) {
      const std::string boot = host.key.substr(host.key.find('\n') + 1);
      if (!boot.empty() && !boots.insert(boot).second) sharedKernel_ = true;
    }
    serial_ = o_.schedule == "serial" || (o_.schedule == "auto" && sharedKernel_);
    // Bandwidth and latency labels.
    if (mpi_.pml == "ob1") {
      shmLabel_ = selectionAllows(mpi_.btl, "vader") ? "shared memory (btl vader)"
                                                     : "shared memory (pml ob1)";
      // The network BTLs the selection allows (not every one of them may have found hardware).
      std::string btls;
      for (const char* b : {"tcp", "openib", "ofi", "uct", "usnic"})
        if (selectionAllows(mpi_.btl, b) && componentInstalled(mpi_.componentPath, "btl", b))
          btls += (btls.empty() ? "" : " or ") + std::string(b);
      netLabel_ = btls.empty() ? "network (pml ob1)" : "network (pml ob1, btl " + btls + ")";
      tcp_ = btls == "tcp";  // then the interfaces are TCP's
    } else if (mpi_.pml == "ucx") {
      shmLabel_ = "shared memory (UCX)";
      netLabel_ = "network (pml ucx)";
    } else if (!mpi_.pml.empty()) {
      shmLabel_ = "shared memory (pml " + mpi_.pml + ")";
      netLabel_ = "network (pml " + mpi_.pml + ")";
    } else {
      shmLabel_ = "shared memory";
      netLabel_ = "network (MPI point-to-point)";
    }
  }

  // The interfaces of host a that Open MPI's TCP BTL would use towards host b: those on a subnet
  // of one of b's usable addresses, else every usable one (routed).
  std::vector<std::string> interfaces(int a, int b) const {
    std::vector<std::string> same, usable;
    const HostInfo& ha = hosts_[static_cast<std::size_t>(a)];
    const HostInfo& hb = hosts_[static_cast<std::size_t>(b)];
    for (const Iface& f : ha.ifaces) {
      if (!tcpAllows(mpi_, f)) continue;
      usable.push_back(f.name);
      for (const Iface& g : hb.ifaces)
        if (tcpAllows(mpi_, g) && (f.addr & f.mask) == (g.addr & f.mask)) {
          same.push_back(f.name);
          break;
        }
    }
    return same.empty() ? usable : same;
  }

  std::string pairTransport(int hostA, int hostB) const {
    if (!tcp_) return netLabel_;
    const auto names = interfaces(hostA, hostB);
    if (names.empty()) return netLabel_;
    std::string via;
    for (const std::string& n : names) via += (via.empty() ? "" : ",") + n;
    return netLabel_.substr(0, netLabel_.size() - 1) + " via " + via + ")";
  }

  void printHeader() {
    std::printf("overpass-check: %s, %s; %s\n", plural(hosts_.size(), "host").c_str(),
                plural(static_cast<std::size_t>(np_), "rank").c_str(), mpi_.library.c_str());
    width_ = 8;
    for (const HostInfo& h : hosts_) width_ = std::max(width_, h.name.size() + 1);
    for (const HostInfo& h : hosts_) {
      std::string ifs;
      for (const Iface& f : h.ifaces)
        ifs += (ifs.empty() ? "" : ", ") + std::string(f.name) + " " + ipv4(f.addr) + "/" +
               std::to_string(prefixLength(f.mask));
      std::printf("  %-*s %-5s %-9s %s\n", static_cast<int>(width_), h.name.c_str(),
                  h.ranks.size() == 1 ? "rank" : "ranks", rankList(h.ranks).c_str(),
                  ifs.empty() ? "(no IPv4 interface)" : ifs.c_str());
    }
    if (!unheard_.empty())
      std::printf("  ranks %s did not say hello to rank 0 within %s: their host is unknown\n",
                  rankList(unheard_).c_str(), formatSeconds(helloSeconds_).c_str());
    std::printf("  within a host: %s; between hosts: %s\n", shmLabel_.c_str(), netLabel_.c_str());
    if (sharedKernel_)
      std::printf(
          "  the hosts share one kernel (network namespaces or containers on one machine)\n");
    std::printf(
        "overpass-check: testing; %s; bandwidth %s x %d per direction, latency %d round trips "
        "of 8 B; timeout %g s, pair timeout %g s%s\n",
        serial_ ? "one test at a time" : "disjoint pairs at once", formatBytes(o_.size).c_str(),
        o_.reps, o_.latencyIters, o_.timeout, o_.pairTimeout,
        o_.startDelay > 0 ? (", starting in " + formatSeconds(o_.startDelay)).c_str() : "");
    std::fflush(stdout);
  }

  // --- rounds ----------------------------------------------------------------------------------

  Test& newTest(bool shm, int a, int b) {
    Test& t = tests_.emplace_back();
    t.id = nextId_++;
    t.shm = shm;
    t.a = a;
    t.b = b;
    t.hostA = hostOf_[static_cast<std::size_t>(a)];
    t.hostB = hostOf_[static_cast<std::size_t>(b)];
    return t;
  }

  void runShmTests() {
    std::vector<std::vector<Test*>> rounds;
    for (const HostInfo& h : hosts_) {
      for (std::size_t k = 1; k < h.ranks.size(); ++k) {
        Test& t = newTest(true, h.ranks[k], h.leader);
        if (rounds.size() < k) rounds.emplace_back();
        rounds[k - 1].push_back(&t);
      }
    }
    runRounds(rounds);
  }

  // Round-robin (circle) rounds: every pair of hosts once, each host in at most one pair a round.
  void runNetworkTests() {
    const int h = static_cast<int>(hosts_.size());
    if (h < 2) return;
    const int n = h % 2 ? h + 1 : h;
    std::vector<int> slot(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) slot[static_cast<std::size_t>(i)] = i;
    std::vector<std::vector<Test*>> rounds;
    for (int round = 0; round < n - 1; ++round) {
      auto& pairs = rounds.emplace_back();
      for (int i = 0; i < n / 2; ++i) {
        int x = slot[static_cast<std::size_t>(i)];
        int y = slot[static_cast<std::size_t>(n - 1 - i)];
        if (x >= h || y >= h) continue;
        if (x > y) std::swap(x, y);
        pairs.push_back(&newTest(false, hosts_[static_cast<std::size_t>(x)].leader,
                                 hosts_[static_cast<std::size_t>(y)].leader));
      }
      std::rotate(slot.begin() + 1, slot.end() - 1, slot.end());
    }
    runRounds(rounds);
  }

  void runRounds(const std::vector<std::vector<Test*>>& rounds) {
    for (const auto& round : rounds) {
      if (serial_) {
        for (Test* t : round) runRound({t});
      } else {
        runRound(round);
      }
    }
  }

  struct Waiting {
    Test* test;
    int rank;
    bool isA;
    double lastHeard;  // its command sent, its acknowledgement or a heartbeat received
    std::int32_t ack = 0;
    std::int32_t beat = 0;
    MPI_Request ackReq = MPI_REQUEST_NULL;
    MPI_Request beatReq = MPI_REQUEST_NULL;
    MPI_Request resultReq = MPI_REQUEST_NULL;
    SideResult result{};
    bool acked = false;
    bool done = false;
  };

  void runRound(const std::vector<Test*>& round) {
    std::deque<Waiting> waiting;
    Test* mine = nullptr;
    for (Test* t : round) {
      if (!startable(*t)) continue;
      for (int side = 0; side < 2; ++side) {
        const int rank = side == 0 ? t->a : t->b;
        const int peer = side == 0 ? t->b : t->a;
        if (rank == 0) {
          mine = t;
          continue;
        }
        Waiting& w = waiting.emplace_back();
        w.test = t;
        w.rank = rank;
        w.isA = side == 0;
        MPI_Irecv(&w.ack, sizeof w.ack, MPI_BYTE, rank, kTagAck, MPI_COMM_WORLD, &w.ackReq);
        MPI_Irecv(&w.beat, sizeof w.beat, MPI_BYTE, rank, kTagHeartbeat, MPI_COMM_WORLD,
                  &w.beatReq);
        MPI_Irecv(&w.result, sizeof(SideResult), MPI_BYTE, rank, testTag(t->id) + 1, MPI_COMM_WORLD,
                  &w.resultReq);
        Command c = {};
        c.kind = CommandKind::kTest;
        c.id = t->id;
        c.peer = peer;
        c.initiator = side == 0 ? 1 : 0;
        outbox_.send(c, rank, kTagCommand);
        w.lastHeard = now();
      }
    }
    if (mine) {
      const bool isA = mine->a == 0;
      const SideResult r = runner_.run(isA ? mine->b : mine->a, isA, mine->id, schedHard());
      (isA ? mine->sideA : mine->sideB) = r;
      (isA ? haveA_ : haveB_).insert(mine->id);
    }
    // A rank that has said nothing (acknowledgement, heartbeat, result) for --pair-timeout is
    // lost: it, or the path from it to rank 0, is gone.
    Backoff idle;
    for (;;) {
      bool pending = false;
      for (Waiting& w : waiting) {
        if (w.done) continue;
        int flag = 0;
        if (!w.acked) {
          MPI_Test(&w.ackReq, &flag, MPI_STATUS_IGNORE);
          if (flag) w.acked = true, w.lastHeard = now();
        }
        for (;;) {
          flag = 0;
          MPI_Test(&w.beatReq, &flag, MPI_STATUS_IGNORE);
          if (!flag) break;
          if (w.beat == w.test->id) w.lastHeard = now();
          MPI_Irecv(&w.beat, sizeof w.beat, MPI_BYTE, w.rank, kTagHeartbeat, MPI_COMM_WORLD,
                    &w.beatReq);
        }
        flag = 0;
        MPI_Test(&w.resultReq, &flag, MPI_STATUS_IGNORE);
        if (flag) {
          w.done = true;
          dropRecv(w.ackReq);
          dropRecv(w.beatReq);
          (w.isA ? w.test->sideA : w.test->sideB) = w.result;
          (w.isA ? haveA_ : haveB_).insert(w.test->id);
          continue;
        }
        const double t = now();
        if (t > w.lastHeard + o_.pairTimeout || t > schedHard()) {
          w.done = true;
          dropRecv(w.ackReq);
          dropRecv(w.beatReq);
          dropRecv(w.resultReq);
          if (t > schedHard() && t <= w.lastHeard + o_.pairTimeout) {
            timedOut_ = true;
          } else {
            markLost(w.rank, w.acked ? "stopped answering rank 0 during a test"
                                     : "did not acknowledge an instruction");
          }
          continue;
        }
        pending = true;
      }
      if (!pending) break;
      idle.wait();
    }
    for (Test* t : round) settle(*t);
  }

  // A moment shortly after the scheduling deadline: the last test's waits end by then.
  double schedHard() const { return schedDeadline_ + 0.5; }

  bool startable(Test& t) {
    if (t.state != TestState::kPending && !t.retested) return false;
    const bool lostA = !answers_[static_cast<std::size_t>(t.a)];
    const bool lostB = !answers_[static_cast<std::size_t>(t.b)];
    if (t.retested && (lostA || lostB || now() >= schedDeadline_)) {
      t.retested = false;  // the first measurement stands
      return false;
    }
    if (lostA || lostB) {
      t.state = TestState::kNoAnswer;
      t.why = "rank " + std::to_string(lostA ? t.a : t.b) + " does not answer rank 0";
      return false;
    }
    if (now() >= schedDeadline_) {
      t.state = TestState::kNotRun;
      t.why = "not run: --timeout reached";
      timedOut_ = true;
      return false;
    }
    haveA_.erase(t.id);
    haveB_.erase(t.id);
    return true;
  }

  // Problems are said as soon as they are found, so that they are out even if the launcher ends
  // the job before the report (its own detection of a lost host can be that quick).
  void markLost(int rank, const std::string& why) {
    if (!answers_[static_cast<std::size_t>(rank)]) return;
    answers_[static_cast<std::size_t>(rank)] = false;
    lostWhy_[rank] = why;
    std::printf("overpass-check: lost rank %d (%s): %s\n", rank,
                hostName(hostOf_[static_cast<std::size_t>(rank)]).c_str(), why.c_str());
    std::fflush(stdout);
  }

  static std::string failure(const SideResult& r, int self, int peer) {
    static const char* phases[] = {"", "ping-pong", "sending", "receiving"};
    const int phase = std::clamp(r.phase, 0, 3);
    std::string what = r.status == SideStatus::kDeadline ? "--timeout reached" : "no answer";
    if (r.phase == 1 && r.messages == 0)
      return "rank " + std::to_string(self) + ": " + what + " from rank " + std::to_string(peer) +
             " (first message)";
    return "rank " + std::to_string(self) + ": " + what + " from rank " + std::to_string(peer) +
           " while " + phases[phase] + " (after " + std::to_string(r.messages) + " messages)";
  }

  // Turns the two sides' results (or their absence) into the test's state.
  void settle(Test& t) {
    if (t.state != TestState::kPending && !t.retested) return;
    if (t.retested && t.state != TestState::kPending) return settleRetest(t);
    const bool haveA = haveA_.count(t.id) > 0;
    const bool haveB = haveB_.count(t.id) > 0;
    const bool okA = haveA && t.sideA.status == SideStatus::kOk;
    const bool okB = haveB && t.sideB.status == SideStatus::kOk;
    if (okA && okB) {
      t.state = TestState::kOk;
      return;
    }
    const bool deadline = (haveA && t.sideA.status == SideStatus::kDeadline) ||
                          (haveB && t.sideB.status == SideStatus::kDeadline);
    if (haveA && t.sideA.status == SideStatus::kPeerSilent) {
      t.state = TestState::kUnreachable;
      t.why = failure(t.sideA, t.a, t.b);
    } else if (haveB && t.sideB.status == SideStatus::kPeerSilent) {
      t.state = TestState::kUnreachable;
      t.why = failure(t.sideB, t.b, t.a);
    }
    if (t.state == TestState::kUnreachable) {
      std::printf("overpass-check: unreachable: %s: %s\n", what(t).c_str(), t.why.c_str());
      std::fflush(stdout);
    } else if (deadline) {
      t.state = TestState::kNotRun;
      t.why = "stopped: --timeout reached";
      timedOut_ = true;
    } else {
      const int missing = !haveA ? t.a : t.b;
      t.state =
          answers_[static_cast<std::size_t>(missing)] ? TestState::kNotRun : TestState::kNoAnswer;
      t.why = answers_[static_cast<std::size_t>(missing)]
                  ? "no result from rank " + std::to_string(missing) + " before --timeout"
                  : "rank " + std::to_string(missing) + " " + lostWhy_[missing];
      if (t.state == TestState::kNotRun) timedOut_ = true;
    }
  }

  // A second measurement of a slow test: keep the better of each figure.
  void settleRetest(Test& t) {
    t.retested = false;
    const bool ok = haveA_.count(t.id) && haveB_.count(t.id) && t.sideA.status == SideStatus::kOk &&
                    t.sideB.status == SideStatus::kOk;
    const SideResult a = t.firstA;
    const SideResult b = t.firstB;
    if (!ok) {
      t.sideA = a;
      t.sideB = b;
      return;
    }
    t.sideA.latencyUs = std::min(t.sideA.latencyUs, a.latencyUs);
    t.sideA.latencyBestUs = std::min(t.sideA.latencyBestUs, a.latencyBestUs);
    t.sideA.bandwidth = std::max(t.sideA.bandwidth, a.bandwidth);
    t.sideB.bandwidth = std::max(t.sideB.bandwidth, b.bandwidth);
    // Each direction keeps the better judged of the two measurements, with that measurement's
    // waits: one measurement's best message with another's waits would be no figure at all.
    Test first = t;
    first.sideA = a;
    first.sideB = b;
    if (first.judgedAB() > t.judgedAB()) {
      t.sideA.bandwidthBest = a.bandwidthBest;
      t.sideA.waitSend = a.waitSend;
      t.sideB.waitReceive = b.waitReceive;
    }
    if (first.judgedBA() > t.judgedBA()) {
      t.sideB.bandwidthBest = b.bandwidthBest;
      t.sideB.waitSend = b.waitSend;
      t.sideA.waitReceive = a.waitReceive;
    }
    t.sideA.latencyCount += a.latencyCount;
    t.sideA.bandwidthCount += a.bandwidthCount;
    t.sideB.bandwidthCount += b.bandwidthCount;
  }

  // --- verdicts ----------------------------------------------------------------------------

  struct Reference {
    double netBandwidth = 0;
    double netLatency = 0;
    double shmBandwidth = 0;
    double shmLatency = 0;
  };

  // The typical figures (medians of the tests' medians) that the best figure of every test is
  // compared with: a path is slow when even its best is far from what a typical one does.
  Reference references() const {
    Reference ref;
    const std::size_t h = hosts_.size();
    std::vector<double> bestBw(h, 0), bestLat(h, std::numeric_limits<double>::infinity());
    std::vector<double> shmBw, shmLat;
    for (const Test& t : tests_) {
      if (t.state != TestState::kOk) continue;
      if (t.shm) {
        shmBw.push_back(t.sideA.bandwidth);
        shmBw.push_back(t.sideB.bandwidth);
        shmLat.push_back(t.sideA.latencyUs);
        continue;
      }
      const double bw = std::max(t.sideA.bandwidth, t.sideB.bandwidth);
      for (int host : {t.hostA, t.hostB}) {
        auto i = static_cast<std::size_t>(host);
        bestBw[i] = std::max(bestBw[i], bw);
        bestLat[i] = std::min(bestLat[i], t.sideA.latencyUs);
      }
    }
    std::vector<double> bw, lat;
    for (std::size_t i = 0; i < h; ++i) {
      if (bestBw[i] > 0) bw.push_back(bestBw[i]);
      if (std::isfinite(bestLat[i])) lat.push_back(bestLat[i]);
    }
    ref.netBandwidth = medianOf(bw);
    ref.netLatency = medianOf(lat);
    ref.shmBandwidth = medianOf(shmBw);
    ref.shmLatency = medianOf(shmLat);
    return ref;
  }

  // How far below (bandwidth) or above (latency) its limit a figure is: above 1 is slow.
  double bandwidthShortfall(const Test& t, double bw, const Reference& ref) const {
    const double refBw = t.shm ? ref.shmBandwidth : ref.netBandwidth;
    double worst = 0;
    if (o_.slowFactor > 0 && refBw > 0 && bw > 0) worst = o_.slowFactor * refBw / bw;
    if (!t.shm && o_.minBandwidth > 0 && bw > 0)
      worst = std::max(worst, o_.minBandwidth * 1e6 / bw);
    return worst;
  }

  double latencyExcess(const Test& t, const Reference& ref) const {
    const double refLat = t.shm ? ref.shmLatency : ref.netLatency;
    const double lat = t.sideA.latencyBestUs;
    double worst = 0;
    if (o_.latencyFactor > 0 && refLat > 0) worst = lat / (o_.latencyFactor * refLat);
    if (!t.shm && o_.maxLatency > 0) worst = std::max(worst, lat / o_.maxLatency);
    return worst;
  }

  void classify() {
    ref_ = references();
    for (Test& t : tests_) {
      t.slowLatency = t.slowAB = t.slowBA = false;
      if (t.state != TestState::kOk) continue;
      t.slowAB = bandwidthShortfall(t, t.judgedAB(), ref_) > 1;
      t.slowBA = bandwidthShortfall(t, t.judgedBA(), ref_) > 1;
      t.slowLatency = latencyExcess(t, ref_) > 1;
    }
  }

  // Slow results close to their limit (within kRetestRange) are measured again, one at a time,
  // before they are reported: a busy machine can halve a figure once, rarely twice.
  // A slow latency is measured again whatever its size (a rank that lost its CPU for a while
  // inflates every round trip); up to kRetests times.
  void retestMarginal() {
    for (int pass = 0; pass < kRetests; ++pass) {
      bool any = false;
      for (Test& t : tests_) {
        if (t.state != TestState::kOk || !t.slow()) continue;
        const double bandwidth = std::max(bandwidthShortfall(t, t.judgedAB(), ref_),
                                          bandwidthShortfall(t, t.judgedBA(), ref_));
        if ((t.slowAB || t.slowBA) && bandwidth > kRetestRange) continue;
        t.firstA = t.sideA;
        t.firstB = t.sideB;
        t.retested = true;
        t.id = nextId_++;  // fresh tags
        runRound({&t});
        any = true;
        retests_++;
      }
      if (!any) return;
      classify();
    }
  }

  // Ranks that stopped answering rank 0: each other host's leader tries them, so the report can
  // say whether anyone reaches them.
  void probeLostRanks() {
    std::map<int, std::vector<int>> lostByHost;
    for (int r = 1; r < np_; ++r)
      if (!answers_[static_cast<std::size_t>(r)] && hostOf_[static_cast<std::size_t>(r)] >= 0)
        lostByHost[hostOf_[static_cast<std::size_t>(r)]].push_back(r);
    if (lostByHost.empty()) return;
    std::vector<int> targets;
    for (auto& [host, ranks] : lostByHost)
      for (std::size_t i = 0; i < ranks.size() && i < 2; ++i)
        if (targets.size() < kMaxProbeTargets) targets.push_back(ranks[i]);
    struct Probe {
      int prober;
      SideResult result{};
      std::int32_t ack = 0;
      MPI_Request ackReq = MPI_REQUEST_NULL;
      MPI_Request req = MPI_REQUEST_NULL;
      bool done = false;
      bool ok = false;
    };
    std::deque<Probe> probes;
    const int id = nextId_++;
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
      const int prober = hosts_[h].leader;
      if (h == static_cast<std::size_t>(hostOf_[0]) || !answers_[static_cast<std::size_t>(prober)])
        continue;
      if (lostByHost.count(static_cast<int>(h))) continue;
      Probe& p = probes.emplace_back();
      p.prober = prober;
      MPI_Irecv(&p.ack, sizeof p.ack, MPI_BYTE, prober, kTagAck, MPI_COMM_WORLD, &p.ackReq);
      MPI_Irecv(&p.result, sizeof(SideResult), MPI_BYTE, prober, testTag(id) + 1, MPI_COMM_WORLD,
                &p.req);
      Command c = {};
      c.kind = CommandKind::kProbe;
      c.id = id;
      c.nTargets = static_cast<std::int32_t>(targets.size());
      std::copy(targets.begin(), targets.end(), c.targets);
      outbox_.send(c, prober, kTagCommand);
    }
    // The probers wait for the targets; rank 0 waits a little longer for them, within what
    // remains before the end.
    const double deadline = std::min(now() + probeWait(o_) + 0.5, schedHard());
    Backoff idle;
    for (;;) {
      bool pending = false;
      for (Probe& p : probes) {
        if (p.done) continue;
        int flag = 0;
        MPI_Test(&p.req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
          p.done = p.ok = true;
          dropRecv(p.ackReq);
        } else if (now() >= deadline) {
          p.done = true;
          dropRecv(p.ackReq);
          dropRecv(p.req);
        } else {
          pending = true;
        }
      }
      if (!pending) break;
      idle.wait();
    }
    for (const Probe& p : probes) {
      if (!p.ok) continue;
      for (std::size_t i = 0; i < targets.size(); ++i)
        (p.result.reached[i] ? reachedBy_ : notReachedBy_)[targets[i]].push_back(p.prober);
    }
    probed_ = true;
  }

  // Slow shared-memory paths are warnings: their figures depend on where the ranks run and what
  // else runs there more than on the hardware.
  int exitCode() const {
    bool slow = false;
    for (const Test& t : tests_) {
      if (t.state != TestState::kOk) return kExitUnreachable;
      slow = slow || (!t.shm && t.slow());
    }
    for (int r = 0; r < np_; ++r)
      if (!answers_[static_cast<std::size_t>(r)]) return kExitUnreachable;
    if (timedOut_) return kExitUnreachable;
    return slow ? kExitSlow : kExitOk;
  }

  // --- report ------------------------------------------------------------------------------

  std::string hostName(int host) const {
    return host >= 0 ? hosts_[static_cast<std::size_t>(host)].name : "?";
  }

  std::string cell(const Test* t, bool latency, bool forward) const {
    if (!t) return "-";
    switch (t->state) {
      case TestState::kOk:
        break;
      case TestState::kUnreachable:
      case TestState::kNoAnswer:
        return "X";
      case TestState::kNotRun:
      case TestState::kPending:
        return "?";
    }
    if (latency) return formatUs(t->sideA.latencyUs) + (t->slowLatency ? "*" : "");
    const bool slow = forward ? t->slowAB : t->slowBA;
    return formatMBps(forward ? t->sideA.bandwidth : t->sideB.bandwidth) + (slow ? "*" : "");
  }

  // The diagonal: the host's slowest shared-memory path.
  std::string shmCell(int host, bool latency) const {
    const Test* worst = nullptr;
    bool bad = false, unknown = false;
    double worstValue = 0;
    bool slow = false;
    for (const Test& t : tests_) {
      if (!t.shm || t.hostA != host) continue;
      if (t.state == TestState::kUnreachable || t.state == TestState::kNoAnswer) bad = true;
      if (t.state != TestState::kOk) {
        unknown = true;
        continue;
      }
      const double v = latency ? t.sideA.latencyUs : std::min(t.sideA.bandwidth, t.sideB.bandwidth);
      if (!worst || (latency ? v > worstValue : v < worstValue)) {
        worst = &t;
        worstValue = v;
      }
      slow = slow || (latency ? t.slowLatency : t.slowAB || t.slowBA);
    }
    if (bad) return "X";
    if (unknown) return "?";
    if (!worst) return "-";
    return (latency ? formatUs(worstValue) : formatMBps(worstValue)) + (slow ? "*" : "");
  }

  void printMatrix(bool latency) const {
    const int w = static_cast<int>(width_);
    if (latency) {
      std::printf(
          "\nLatency, us (half the median round trip of 8 B); diagonal: shared memory within the "
          "host (its slowest rank)\n");
    } else {
      std::printf(
          "\nBandwidth, MB/s (median of %d x %s): row sends to column; diagonal: shared memory "
          "within the host (its slowest rank and direction)\n",
          o_.reps, formatBytes(o_.size).c_str());
    }
    std::printf("  %-*s", w, latency ? "" : "from\\to");
    for (const HostInfo& h : hosts_) std::printf(" %*s", w, h.name.c_str());
    std::printf("\n");
    const int n = static_cast<int>(hosts_.size());
    for (int i = 0; i < n; ++i) {
      std::printf("  %-*s", w, hosts_[static_cast<std::size_t>(i)].name.c_str());
      for (int j = 0; j < n; ++j) {
        std::string c;
        if (i == j) {
          c = shmCell(i, latency);
        } else {
          const Test* t = networkTest(i, j);
          c = cell(t, latency, t && t->hostA == i);
        }
        std::printf(" %*s", w, c.c_str());
      }
      std::printf("\n");
    }
  }

  const Test* networkTest(int i, int j) const {
    for (const Test& t : tests_)
      if (!t.shm && ((t.hostA == i && t.hostB == j) || (t.hostA == j && t.hostB == i))) return &t;
    return nullptr;
  }

  std::string transportOf(const Test& t) const {
    return t.shm ? shmLabel_ : pairTransport(t.hostA, t.hostB);
  }

  std::string what(const Test& t) const {
    return t.shm ? hostName(t.hostA) + " rank " + std::to_string(t.a) + " <-> rank " +
                       std::to_string(t.b) + " (shared memory)"
                 : hostName(t.hostA) + " <-> " + hostName(t.hostB) + " (ranks " +
                       std::to_string(t.a) + ", " + std::to_string(t.b) + ")";
  }

  std::string describe(const Test& t) const {
    std::string text = what(t) + ": ";
    if (t.state != TestState::kOk)
      return text + (t.state == TestState::kNotRun ? "not done: " : "UNREACHABLE: ") + t.why;
    const auto slow = [](bool s) { return s ? " (slow)" : ""; };
    text += formatUs(t.sideA.latencyUs) + " us" + slow(t.slowLatency) + " (best " +
            formatUs(t.sideA.latencyBestUs) + "), " + formatMBps(t.sideA.bandwidth) +
            slow(t.slowAB) + " / " + formatMBps(t.sideB.bandwidth) + slow(t.slowBA) +
            " MB/s (best " + formatMBps(t.sideA.bandwidthBest) + " / " +
            formatMBps(t.sideB.bandwidthBest) + "), " + transportOf(t);
    if (t.waitMax() >= kBusyWait)
      text += ", waited for a CPU " + std::to_string(static_cast<int>(100 * t.waitMax())) +
              "% of the time";
    return text + (t.slow() ? "  SLOW" : "");
  }

  std::vector<std::string> problems() const {
    std::vector<std::string> out;
    // Ranks that stopped answering, by host.
    std::map<int, std::vector<int>> lostByHost;
    for (int r = 1; r < np_; ++r)
      if (!answers_[static_cast<std::size_t>(r)] && hostOf_[static_cast<std::size_t>(r)] >= 0)
        lostByHost[hostOf_[static_cast<std::size_t>(r)]].push_back(r);
    for (const auto& [host, ranks] : lostByHost) {
      const HostInfo& h = hosts_[static_cast<std::size_t>(host)];
      const bool whole = ranks.size() == h.ranks.size();
      std::string line = "unreachable: " + (whole ? "host " + h.name : h.name) + " (rank" +
                         (ranks.size() > 1 ? "s " : " ") + rankList(ranks) +
                         (whole ? "" : " of " + rankList(h.ranks)) + "), as seen from rank 0 (" +
                         hostName(hostOf_[0]) + "): " + lostWhy_.at(ranks.front());
      std::set<int> by, notBy;
      for (int r : ranks) {
        if (auto it = reachedBy_.find(r); it != reachedBy_.end())
          for (int p : it->second) by.insert(hostOf_[static_cast<std::size_t>(p)]);
        if (auto it = notReachedBy_.find(r); it != notReachedBy_.end())
          for (int p : it->second) notBy.insert(hostOf_[static_cast<std::size_t>(p)]);
      }
      for (int x : by) notBy.erase(x);
      const auto names = [&](const std::set<int>& s) {
        std::string t;
        for (int x : s) t += (t.empty() ? "" : ", ") + hostName(x);
        return t;
      };
      if (!by.empty())
        line += "; but " + names(by) + " reach" + (by.size() == 1 ? "es" : "") +
                " it: the path between it and " + hostName(hostOf_[0]) + " is broken";
      if (!notBy.empty())
        line += "; " + names(notBy) + (by.empty() ? " cannot reach it either" : " cannot reach it");
      if (probed_ && by.empty() && notBy.empty() && hosts_.size() > 2)
        line += "; no other host could try it";
      out.push_back(line);
    }
    if (!unheard_.empty())
      out.push_back("unreachable: ranks " + rankList(unheard_) +
                    " did not say hello to rank 0 (their host is unknown)");
    // Hosts all of whose pairs failed, then the pairs.
    const int n = static_cast<int>(hosts_.size());
    std::vector<int> pairs(static_cast<std::size_t>(n), 0), bad(static_cast<std::size_t>(n), 0),
        slow(static_cast<std::size_t>(n), 0);
    for (const Test& t : tests_) {
      if (t.shm) continue;
      for (int host : {t.hostA, t.hostB}) {
        pairs[static_cast<std::size_t>(host)]++;
        if (t.state == TestState::kUnreachable || t.state == TestState::kNoAnswer)
          bad[static_cast<std::size_t>(host)]++;
        else if (t.state == TestState::kOk && t.slow())
          slow[static_cast<std::size_t>(host)]++;
      }
    }
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (pairs[k] >= 2 && bad[k] == pairs[k] && !lostByHost.count(i))
        out.push_back("unreachable: host " + hostName(i) + ": no other host reaches it");
      else if (pairs[k] >= 2 && bad[k] + slow[k] == pairs[k] && slow[k] > 0)
        out.push_back("slow host: " + hostName(i) + " (every pair it is in is slow" +
                      std::string(bad[k] ? " or unreachable" : "") + ")");
    }
    for (const Test& t : tests_) {
      if (t.state == TestState::kUnreachable || t.state == TestState::kNoAnswer ||
          t.state == TestState::kNotRun) {
        out.push_back(std::string(t.state == TestState::kNotRun ? "not done: " : "unreachable: ") +
                      what(t) + ": " + t.why);
      } else if (t.slow() && !t.shm) {
        out.push_back("slow: " + describe(t) + slowReason(t));
      }
    }
    return out;
  }

  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const Test& t : tests_)
      if (t.shm && t.state == TestState::kOk && t.slow())
        out.push_back("slow shared memory: " + describe(t) + slowReason(t));
    return out;
  }

  std::string slowReason(const Test& t) const {
    std::string why;
    const double refBw = t.shm ? ref_.shmBandwidth : ref_.netBandwidth;
    const double refLat = t.shm ? ref_.shmLatency : ref_.netLatency;
    if (t.slowAB || t.slowBA) {
      const bool waited = std::max(t.waitAB(), t.waitBA()) > 0;
      why += " [even the best message" +
             std::string(waited ? ", counting only the time its sides had a CPU," : "") +
             " below " + formatFactor(o_.slowFactor) + " x " + formatMBps(refBw) + " MB/s" +
             (t.shm ? ", the median of the shared-memory paths"
                    : ", the median of the hosts' best pairs") +
             (!t.shm && o_.minBandwidth > 0 ? ", or below --min-bandwidth" : "") + "]";
    }
    if (t.slowLatency) {
      why += " [latency above " + formatFactor(o_.latencyFactor) + " x " + formatUs(refLat) +
             " us" + (!t.shm && o_.maxLatency > 0 ? ", or --max-latency" : "") + "]";
    }
    return why;
  }

  void report(int code) {
    if (o_.verbose) {
      std::printf("\n");
      for (const Test& t : tests_) std::printf("  %s\n", describe(t).c_str());
    }
    if (hosts_.size() > 0) {
      printMatrix(true);
      printMatrix(false);
      std::printf("  * slow   X unreachable   ? not done   - nothing to test\n");
    }
    std::printf("\nTransport: within a host: %s; between hosts: %s\n", shmLabel_.c_str(),
                netTransportSummary().c_str());
    double mostWait = 0;
    for (const Test& t : tests_)
      if (t.state == TestState::kOk) mostWait = std::max(mostWait, t.waitMax());
    if (mostWait >= kBusyWait)
      std::printf(
          "Note: during some tests a rank waited for a CPU up to %d%% of the time (other "
          "programs, or more ranks than cores): their figures are below what the paths can do\n",
          static_cast<int>(100 * mostWait));
    const auto list = problems();
    int slowCount = 0, badCount = 0;
    for (const Test& t : tests_) {
      if (t.state == TestState::kOk && t.slow() && !t.shm) slowCount++;
      if (t.state != TestState::kOk) badCount++;
    }
    if (!list.empty()) {
      std::printf("\nProblems:\n");
      for (const std::string& p : list) std::printf("  %s\n", p.c_str());
    }
    const auto warned = warnings();
    if (!warned.empty()) {
      std::printf(
          "\nWarnings (shared-memory figures depend on where the ranks run and what else runs "
          "there; they do not change the exit status):\n");
      for (const std::string& w : warned) std::printf("  %s\n", w.c_str());
    }
    const double seconds = now() - start_ - o_.startDelay;
    std::size_t shmTests = 0, netTests = 0;
    for (const Test& t : tests_) (t.shm ? shmTests : netTests)++;
    if (code == kExitOk) {
      std::printf("\noverpass-check: OK: %s, %s; %s and %s reachable, none slow (%.1f s)\n",
                  plural(hosts_.size(), "host").c_str(),
                  plural(static_cast<std::size_t>(np_), "rank").c_str(),
                  plural(shmTests, "shared-memory path").c_str(),
                  plural(netTests, "host pair").c_str(), seconds);
    } else {
      std::printf(
          "\noverpass-check: FAILED (exit %d): %d path%s slow, %d unreachable or not done%s "
          "(%.1f s)\n",
          code, slowCount, slowCount == 1 ? "" : "s", badCount,
          timedOut_ ? ", --timeout reached" : "", seconds);
    }
    std::fflush(stdout);
    if (!o_.jsonPath.empty()) writeJson(code, list, warned, seconds);
  }

  std::string netTransportSummary() const {
    std::set<std::string> seen;
    for (const Test& t : tests_)
      if (!t.shm) seen.insert(pairTransport(t.hostA, t.hostB));
    if (seen.empty()) return netLabel_;
    std::string out;
    for (const std::string& s : seen) out += (out.empty() ? "" : "; ") + s;
    return out;
  }

  static const char* stateName(TestState s) {
    switch (s) {
      case TestState::kOk:
        return "ok";
      case TestState::kUnreachable:
        return "unreachable";
      case TestState::kNoAnswer:
        return "no_answer";
      case TestState::kNotRun:
        return "not_done";
      case TestState::kPending:
        break;
    }
    return "pending";
  }

  void writeJson(int code, const std::vector<std::string>& list,
                 const std::vector<std::string>& warned, double seconds) const {
    using nlohmann::json;
    json j;
    j["exit_code"] = code;
    j["seconds"] = seconds;
    j["mpi"] = {{"library", mpi_.library},
                {"pml", mpi_.pml},
                {"btl", mpi_.btl},
                {"btl_tcp_if_include", mpi_.tcpInclude},
                {"btl_tcp_if_exclude", mpi_.tcpExclude}};
    j["transport"] = {{"shm", shmLabel_}, {"network", netTransportSummary()}};
    j["settings"] = {{"timeout_s", o_.timeout},
                     {"pair_timeout_s", o_.pairTimeout},
                     {"slow_factor", o_.slowFactor},
                     {"latency_factor", o_.latencyFactor},
                     {"min_bandwidth_MBps", o_.minBandwidth},
                     {"max_latency_us", o_.maxLatency},
                     {"size", o_.size},
                     {"reps", o_.reps},
                     {"lat_iters", o_.latencyIters},
                     {"serial", serial_},
                     {"shared_kernel", sharedKernel_}};
    j["reference"] = {{"network_bandwidth_MBps", ref_.netBandwidth / 1e6},
                      {"network_latency_us", ref_.netLatency},
                      {"shm_bandwidth_MBps", ref_.shmBandwidth / 1e6},
                      {"shm_latency_us", ref_.shmLatency}};
    j["hosts"] = json::array();
    for (const HostInfo& h : hosts_) {
      json ifs = json::array();
      for (const Iface& f : h.ifaces)
        ifs.push_back({{"name", f.name},
                       {"address", ipv4(f.addr) + "/" + std::to_string(prefixLength(f.mask))}});
      std::vector<int> lost;
      for (int r : h.ranks)
        if (!answers_[static_cast<std::size_t>(r)]) lost.push_back(r);
      j["hosts"].push_back({{"name", h.name},
                            {"ranks", h.ranks},
                            {"leader", h.leader},
                            {"interfaces", ifs},
                            {"unreachable_ranks", lost}});
    }
    j["unknown_ranks"] = unheard_;
    j["tests"] = json::array();
    for (const Test& t : tests_) {
      json e = {{"kind", t.shm ? "shm" : "network"},
                {"hosts", json::array({hostName(t.hostA), hostName(t.hostB)})},
                {"ranks", json::array({t.a, t.b})},
                {"transport", transportOf(t)},
                {"state", stateName(t.state)}};
      if (t.state == TestState::kOk) {
        e["latency_us"] = t.sideA.latencyUs;
        e["best_latency_us"] = t.sideA.latencyBestUs;
        e["bandwidth_MBps"] = json::array({t.sideA.bandwidth / 1e6, t.sideB.bandwidth / 1e6});
        e["best_bandwidth_MBps"] =
            json::array({t.sideA.bandwidthBest / 1e6, t.sideB.bandwidthBest / 1e6});
        e["judged_bandwidth_MBps"] = json::array({t.judgedAB() / 1e6, t.judgedBA() / 1e6});
        e["samples"] = {
            {"latency", t.sideA.latencyCount},
            {"bandwidth", json::array({t.sideA.bandwidthCount, t.sideB.bandwidthCount})}};
        e["cpu_wait"] = {{"latency", t.waitLatency()},
                         {"bandwidth", json::array({t.waitAB(), t.waitBA()})}};
        e["slow"] = {{"latency", t.slowLatency}, {"bandwidth", json::array({t.slowAB, t.slowBA})}};
      } else {
        e["why"] = t.why;
      }
      j["tests"].push_back(e);
    }
    j["problems"] = list;
    j["warnings"] = warned;
    std::ofstream out(o_.jsonPath);
    out << j.dump(2) << "\n";
    if (!out) std::fprintf(stderr, "overpass-check: cannot write %s\n", o_.jsonPath.c_str());
  }

  // --- end -----------------------------------------------------------------------------------

  // Every rank that answers is told to finish and acknowledges; then MPI_Finalize, or MPI_Abort
  // where a rank is lost (MPI_Finalize would wait for it).
  // Every rank that answers is told that the check is over (and its exit code, as it stands) and
  // acknowledges; one that does not is lost too. The ranks then go on to MPI_Finalize.
  void endExchange() {
    const int code = exitCode();
    bool aborting = false;
    for (int r = 0; r < np_; ++r) aborting = aborting || !answers_[static_cast<std::size_t>(r)];
    std::vector<std::int32_t> acks(static_cast<std::size_t>(np_), 0);
    std::vector<MPI_Request> reqs;
    std::vector<int> who;
    for (int r = 1; r < np_; ++r) {
      if (!answers_[static_cast<std::size_t>(r)]) continue;
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Irecv(&acks[static_cast<std::size_t>(r)], sizeof(std::int32_t), MPI_BYTE, r,
                kTagFinishAck, MPI_COMM_WORLD, &req);
      reqs.push_back(req);
      who.push_back(r);
      Command c = {};
      c.kind = CommandKind::kFinish;
      c.id = code;
      c.aborting = aborting ? 1 : 0;
      outbox_.send(c, r, kTagCommand);
    }
    if (reqs.empty() ||
        waitAll(reqs.data(), static_cast<int>(reqs.size()),
                now() + std::min(o_.pairTimeout, std::max(1.0, end_ - now())), Poll::kIdle))
      return;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      int flag = 0;
      MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
      if (flag) continue;
      dropRecv(reqs[i]);
      markLost(who[i], "did not acknowledge the end of the check");
    }
  }

  // MPI_Finalize (the caller's) where every rank answered; MPI_Abort otherwise, since
  // MPI_Finalize would wait for the lost ranks.
  int end(int code) {
    bool lost = false;
    for (int r = 0; r < np_; ++r) lost = lost || !answers_[static_cast<std::size_t>(r)];
    if (lost) {
      std::printf(
          "overpass-check: ending the job with MPI_Abort(%d): some ranks cannot be reached, and "
          "MPI_Finalize would wait for them\n",
          code);
      std::fflush(stdout);
      sleepFor(0.3);  // let the launcher forward the report before it tears the job down
      abortJob(code);
    }
    return code;
  }

  const Options& o_;
  int np_;
  double start_;
  double schedDeadline_ = 0;
  double end_ = 0;
  TestRunner runner_;
  Outbox outbox_;
  MpiInfo mpi_;
  std::vector<Hello> hellos_;
  std::vector<bool> heard_;
  std::vector<bool> answers_;
  std::map<int, std::string> lostWhy_;
  std::vector<int> unheard_;
  double helloSeconds_ = 0;
  std::vector<int> hostOf_;
  std::vector<HostInfo> hosts_;
  bool sharedKernel_ = false;
  bool serial_ = false;
  bool tcp_ = false;
  std::string shmLabel_, netLabel_;
  std::size_t width_ = 8;
  std::deque<Test> tests_;
  int nextId_ = 0;
  std::set<int> haveA_, haveB_;
  Reference ref_;
  bool timedOut_ = false;
  int retests_ = 0;
  std::map<int, std::vector<int>> reachedBy_, notReachedBy_;
  bool probed_ = false;
};

// ---------------------------------------------------------------------------------------------
// Every other rank: hello, then instructions from rank 0 until told to finish.

class Worker {
 public:
  Worker(const Options& o, int rank, double start) : o_(o), rank_(rank), runner_(o) {
    // Longer than rank 0 can take (its deadline, the end exchange, the report): past this, rank 0
    // or the path to it is gone.
    deadline_ = start + o_.startDelay + o_.timeout + 5;
  }

  int run() {
    hello_ = makeHello();
    outbox_.send(hello_, 0, kTagHello);
    MPI_Irecv(rank0Host_, sizeof rank0Host_, MPI_BYTE, 0, kTagWelcome, MPI_COMM_WORLD,
              &welcomeReq_);
    postProbe();
    for (;;) {
      Command c = {};
      if (!nextCommand(c)) {
        int welcomed = 0;
        MPI_Test(&welcomeReq_, &welcomed, MPI_STATUS_IGNORE);
        rank0Host_[sizeof rank0Host_ - 1] = '\0';
        std::fprintf(stderr,
                     "overpass-check: rank %d (%s): no word from rank 0 (%s) for %.0f s: rank 0 "
                     "or the path to it is unreachable; ending the job (exit %d)\n",
                     rank_, hello_.host, welcomed ? rank0Host_ : "host unknown", now() - lastWord_,
                     kExitUnreachable);
        abortJob(kExitUnreachable);
      }
      lastWord_ = now();
      switch (c.kind) {
        case CommandKind::kTest: {
          outbox_.send(std::int32_t{1}, 0, kTagAck);
          // Heartbeats tell rank 0 that this rank is still at work.
          double lastBeat = now();
          const Tick beat = [&] {
            if (now() - lastBeat < o_.pairTimeout / 4) return;
            lastBeat = now();
            outbox_.send(std::int32_t{c.id}, 0, kTagHeartbeat);
          };
          const SideResult r = runner_.run(c.peer, c.initiator != 0, c.id, deadline_, beat);
          outbox_.send(r, 0, testTag(c.id) + 1);
          break;
        }
        case CommandKind::kProbe:
          outbox_.send(std::int32_t{1}, 0, kTagAck);
          probe(c);
          break;
        case CommandKind::kFinish:
          outbox_.send(std::int32_t{1}, 0, kTagFinishAck);
          if (c.aborting) awaitAbort(c.id);
          return c.id;
      }
    }
  }

 private:
  // Rank 0 is about to end the job with MPI_Abort: MPI_Finalize would wait for the lost ranks.
  // The launcher normally kills this process within a second; where it cannot reach this host,
  // the process ends itself.
  [[noreturn]] void awaitAbort(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    const double until = now() + 10;
    Backoff idle;
    while (now() < until) {
      serveProbe();
      idle.wait();
    }
    _exit(code);
  }

  // Waits for rank 0's next instruction, answering other ranks' probes meanwhile.
  bool nextCommand(Command& c) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Irecv(&c, sizeof c, MPI_BYTE, 0, kTagCommand, MPI_COMM_WORLD, &req);
    Backoff idle;
    for (;;) {
      int flag = 0;
      MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      if (flag) return true;
      serveProbe();
      if (now() >= deadline_) {
        dropRecv(req);
        return false;
      }
      idle.wait();
    }
  }

  void postProbe() {
    MPI_Irecv(&probeIn_, sizeof probeIn_, MPI_BYTE, MPI_ANY_SOURCE, kTagProbe, MPI_COMM_WORLD,
              &probeReq_);
  }

  void serveProbe() {
    int flag = 0;
    MPI_Status st;
    MPI_Test(&probeReq_, &flag, &st);
    if (!flag) return;
    outbox_.send(probeIn_, st.MPI_SOURCE, kTagProbeReply);
    postProbe();
  }

  // Tries each target at once; reports which answered within --pair-timeout.
  void probe(const Command& c) {
    SideResult r = {};
    r.id = c.id;
    const int n = std::clamp(c.nTargets, 0, kMaxProbeTargets);
    std::vector<std::int32_t> replies(static_cast<std::size_t>(n), -1);
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(n), MPI_REQUEST_NULL);
    for (int i = 0; i < n; ++i) {
      MPI_Irecv(&replies[static_cast<std::size_t>(i)], sizeof(std::int32_t), MPI_BYTE, c.targets[i],
                kTagProbeReply, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(i)]);
      outbox_.send(std::int32_t{c.id}, c.targets[i], kTagProbe);
    }
    const double deadline = std::min(now() + probeWait(o_), deadline_);
    Backoff idle;
    for (;;) {
      int pending = 0;
      for (int i = 0; i < n; ++i) {
        auto& req = reqs[static_cast<std::size_t>(i)];
        if (req == MPI_REQUEST_NULL) continue;
        int flag = 0;
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (flag)
          r.reached[i] = 1;
        else
          pending++;
      }
      serveProbe();
      if (pending == 0 || now() >= deadline) break;
      idle.wait();
    }
    for (auto& req : reqs) dropRecv(req);
    outbox_.send(r, 0, testTag(c.id) + 1);
  }

  const Options& o_;
  int rank_;
  TestRunner runner_;
  Outbox outbox_;
  Hello hello_{};
  double deadline_ = 0;
  double lastWord_ = now();
  std::int32_t probeIn_ = 0;
  MPI_Request probeReq_ = MPI_REQUEST_NULL;
  char rank0Host_[MPI_MAX_PROCESSOR_NAME] = {};
  MPI_Request welcomeReq_ = MPI_REQUEST_NULL;
};

int checkMain(int argc, char** argv, double start) {
  int rank = 0;
  int np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Options o;
  if (const std::optional<int> stop = parseOptions(argc, argv, rank, o)) return *stop;
  if (rank == 0) return Coordinator(o, np, start).run();
  return Worker(o, rank, start).run();
}

}  // namespace
}  // namespace overpass::check

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double start = overpass::check::now();
  const int status = overpass::check::checkMain(argc, argv, start);
  // Every rank that gets here was told to finish by rank 0 (or stops on its arguments): the
  // others answer, so MPI_Finalize returns; should it not, the process ends itself.
  overpass::check::armExitTimer(status ? status : overpass::check::kExitUnreachable, 30);
  MPI_Finalize();
  alarm(0);
  return status;
}
