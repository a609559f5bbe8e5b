#include "shim/watchdog.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/collective.h"
#include "common/log.h"
#include "common/progress.h"
#include "shim/world_ranks.h"
#include "shm/progress_board.h"

namespace overpass::shim {

namespace watchdog_detail {

std::atomic<bool> gRunning{false};

// One thread's current call. Written by that thread, read by the watchdog.
struct Slot {
  std::atomic<bool> claimed{false};
  std::atomic<std::uint64_t> generation{0};  // odd while inside a call
  std::atomic<std::uint64_t> progress{0};    // the thread's progress notes point here
  std::atomic<int> what{-1};
  std::atomic<MPI_Comm> comm{MPI_COMM_NULL};
  std::atomic<std::uint64_t> commKey{0}, call{0};
};

}  // namespace watchdog_detail

namespace {

using watchdog_detail::Slot;

// Threads that make collective calls concurrently (MPI_THREAD_MULTIPLE); beyond, a thread's
// calls go unwatched, with one warning.
constexpr int kSlots = 64;
// After the report: how long PMPI_Abort may take before the process exits by itself.
constexpr auto kAbortGrace = std::chrono::milliseconds(700);
constexpr int kExitStatus = 1;
// Between the report and the abort.
constexpr auto kReportOut = std::chrono::milliseconds(150);
// Peers named one by one in a report.
constexpr std::size_t kNamedPeers = 8;
// Overpass's start-up may take this long without progress, whatever the timeout.
constexpr std::int64_t kPhaseMinNs = 10'000'000'000;
// A rank whose report is not the detailed one waits this long before it aborts the job.
constexpr auto kOthersFirst = std::chrono::milliseconds(300);

struct State {
  std::array<Slot, kSlots> slots;
  std::int64_t timeoutNs = 0;
  std::chrono::milliseconds tick{100};
  // A peer whose watchdog has not ticked for this long is not running (stopped, or starved).
  std::int64_t staleNs = 0;
  int worldRank = 0;
  long pid = 0;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  // The host's progress board, and every world rank's index on it (-1: another host).
  std::unique_ptr<ProgressBoard> board;
  std::atomic<bool> boardReady{false};
  int myIndex = -1;
  std::vector<int> boardIndex;
  std::vector<long> pids;
  std::vector<std::string> hosts;  // by world rank
};

State& state() {
  static State* s = new State();  // never destroyed: threads may outlive static destructors
  return *s;
}

struct SlotOwner {
  Slot* slot = nullptr;
  int depth = 0;  // watched calls of this thread in progress (a collective in an error handler)
  bool warned = false;
  ~SlotOwner() {
    if (slot) slot->claimed.store(false, std::memory_order_release);
  }
};
thread_local SlotOwner tOwner;

Slot* threadSlot() {
  if (tOwner.slot) return tOwner.slot;
  for (Slot& s : state().slots) {
    bool expected = false;
    if (!s.claimed.load(std::memory_order_relaxed) &&
        s.claimed.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      // The generation goes on counting: a new owner's first call is never taken for the last
      // owner's.
      return tOwner.slot = &s;
    }
  }
  if (!tOwner.warned)
    OVERPASS_WARN("OVERPASS_TIMEOUT: more than %d threads in collectives; this one is not watched",
                  kSlots);
  tOwner.warned = true;
  return nullptr;
}

// "host1 (world ranks 2-3), host2 (world rank 4)": sorted world ranks grouped by their host, in
// the order of each host's first rank; ranks outside the world (spawned) last.
std::string byHost(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (int w : ranks) {
    const std::string host =
        w >= 0 && w < static_cast<int>(hosts.size()) ? hosts[w] : "not of this world";
    auto g = std::find_if(groups.begin(), groups.end(), [&](auto& x) { return x.first == host; });
    if (g == groups.end()) g = groups.insert(groups.end(), {host, {}});
    g->second.push_back(w);
  }
  std::string out;
  for (const auto& [host, members] : groups)
    out += (out.empty() ? "" : ", ") + host + " (world rank" + (members.size() > 1 ? "s " : " ") +
           rankRanges(members) + ")";
  return out;
}

std::string whatName(int what) {
  if (what == BoardRecord::kFinished) return "MPI_Finalize (past Overpass's teardown)";
  if (what == BoardRecord::kStartup) return "Overpass's start-up in MPI_Init";
  if (what == BoardRecord::kTeardown) return "Overpass's teardown in MPI_Finalize";
  if (what >= 0 && what < static_cast<int>(kNumCollectives))
    return std::string(collectiveName(static_cast<Collective>(what)));
  return "no collective yet";
}

std::string seconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

bool processAlive(long pid) {
  return pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

// One line about a peer whose state explains (or may explain) the stuck call.
std::string peerLine(const PeerView& view, const BoardRecord& peer, const BoardRecord& mine,
                     std::int64_t nowNs) {
  const std::string call =
      peer.call ? "call " + std::to_string(peer.call) + " (" + whatName(peer.what) + ")"
                : whatName(peer.what);
  switch (view.verdict) {
    case PeerVerdict::kExited:
      return "has exited";
    case PeerVerdict::kFinished:
      return "has reached MPI_Finalize";
    case PeerVerdict::kNotRunning:
      return "has not run for " + seconds(nowNs - peer.heartbeatNs) +
             " (stopped, or starved of the CPU)" +
             (peer.what >= 0
                  ? std::string(peer.inCall ? "; it is in " : "; it last returned from ") +
                        (peer.commKey == mine.commKey
                             ? call + " on this communicator"
                             : whatName(peer.what) + " on another communicator")
                  : "");
    case PeerVerdict::kNeverCalled:
      return "has not entered any collective Overpass intercepts";
    case PeerVerdict::kBehind:
      return peer.inCall ? "is behind: in " + call + " on this communicator since " +
                               seconds(nowNs - peer.sinceNs)
                         : "is behind: not in this call; its last on this communicator, " + call +
                               ", returned " + seconds(nowNs - peer.sinceNs) + " ago";
    case PeerVerdict::kElsewhere:
      return std::string(peer.inCall ? "is in " : "is not in this call; it last returned from ") +
             whatName(peer.what) + " on another communicator" +
             (peer.inCall ? " since " + seconds(nowNs - peer.sinceNs)
                          : " " + seconds(nowNs - peer.sinceNs) + " ago");
    case PeerVerdict::kUnknown:
      return std::string(peer.inCall ? "is in " : "last returned from ") + whatName(peer.what);
    default:
      return "";
  }
}

// Started before anything of the report is written: whatever blocks (a stdio lock held by a
// thread stuck on a full pipe, PMPI_Abort itself), the process ends.
void armExitTimer() {
  std::thread([] {
    std::this_thread::sleep_for(kReportOut + kOthersFirst + kAbortGrace);
    _exit(kExitStatus);
  }).detach();
}

[[noreturn]] void abortJob() {
  // mpirun forwards the report from a pipe; an abort right behind it can overtake it.
  std::fflush(nullptr);
  std::this_thread::sleep_for(kReportOut);
  PMPI_Abort(MPI_COMM_WORLD, kExitStatus);
  _exit(kExitStatus);
}

// Writes the report of a stuck call and ends the job. Runs on the watchdog thread.
[[noreturn]] void fire(const Slot& slot, std::int64_t stuckNs) {
  armExitTimer();
  State& s = state();
  const std::int64_t now = monotonicNs();
  const int what = slot.what.load(std::memory_order_relaxed);
  const MPI_Comm comm = slot.comm.load(std::memory_order_relaxed);
  BoardRecord mine;
  mine.commKey = slot.commKey.load(std::memory_order_relaxed);
  mine.call = slot.call.load(std::memory_order_relaxed);
  mine.what = what;

  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0, rank = 0;
  PMPI_Comm_get_name(comm, name, &len);
  PMPI_Comm_rank(comm, &rank);
  const std::vector<int> members = worldRanks(comm);
  std::vector<int> sortedMembers = members;
  std::sort(sortedMembers.begin(), sortedMembers.end());
  const bool collective = what >= 0 && what < static_cast<int>(kNumCollectives);
  const std::string callText = collective && mine.call
                                   ? "call " + std::to_string(mine.call) + " on communicator"
                                   : "communicator";
  OVERPASS_ERROR(
      "OVERPASS_TIMEOUT: %s made no progress for %s: %s '%s' of %zu ranks (world ranks %s); "
      "this is its rank %d (world rank %d, pid %ld)",
      whatName(what).c_str(), seconds(stuckNs).c_str(), callText.c_str(), len ? name : "unnamed",
      members.size(), rankRanges(sortedMembers).c_str(), rank, s.worldRank, s.pid);

  std::vector<int> direct, indirect, waiting, elsewhere;  // world ranks
  std::vector<std::string> lines;                         // about the peers that matter
  const bool board = s.boardReady.load(std::memory_order_acquire);
  for (std::size_t q = 0; q < members.size(); ++q) {
    const int w = members[q];
    if (w == s.worldRank) continue;
    if (!board || w < 0 || s.boardIndex[w] < 0) {  // w < 0: not of this world (spawned)
      elsewhere.push_back(w);
      continue;
    }
    const BoardRecord peer = s.board->read(s.boardIndex[w]);
    const PeerView view = judgePeer(mine, peer, processAlive(s.pids[w]), now, s.staleNs);
    if (view.verdict == PeerVerdict::kWaitingToo) waiting.push_back(w);
    if (view.blame == Blame::kDirect) direct.push_back(w);
    if (view.blame == Blame::kIndirect) indirect.push_back(w);
    const std::string line = peerLine(view, peer, mine, now);
    if (line.empty()) continue;
    if (lines.size() == kNamedPeers)
      lines.push_back("... and more");
    else if (lines.size() < kNamedPeers)
      lines.push_back("rank " + std::to_string(q) + " (world rank " + std::to_string(w) + ", pid " +
                      std::to_string(s.pids[w]) + ") " + line);
  }
  // Of the ranks of this host that wait in the same call, the lowest gives the details; the
  // others say what they concluded (each may be the first whose report gets out).
  for (std::vector<int>* v : {&direct, &indirect, &waiting, &elsewhere})
    std::sort(v->begin(), v->end());
  const bool details = waiting.empty() || s.worldRank < waiting.front();
  if (details) {
    for (const std::string& line : lines) OVERPASS_ERROR("OVERPASS_TIMEOUT:   %s", line.c_str());
    if (!waiting.empty())
      OVERPASS_ERROR("OVERPASS_TIMEOUT:   waiting in this call too: world ranks %s",
                     rankRanges(waiting).c_str());
    if (!elsewhere.empty() && board)
      OVERPASS_ERROR(
          "OVERPASS_TIMEOUT:   not heard from here, on other hosts: %s (their "
          "watchdogs report what they see; those that report this call are waiting "
          "too)",
          byHost(elsewhere, s.hosts).c_str());
    else if (!elsewhere.empty())
      OVERPASS_ERROR(
          "OVERPASS_TIMEOUT:   not visible (no progress board on this rank): world "
          "ranks %s",
          rankRanges(elsewhere).c_str());
  } else {
    OVERPASS_ERROR("OVERPASS_TIMEOUT:   (the peers' states: in world rank %d's report)",
                   waiting.front());
  }
  // Ranks stuck in other calls wait on someone themselves: named only when no rank is known
  // not to have arrived.
  const std::vector<int>& culprits = direct.empty() ? indirect : direct;
  if (!culprits.empty()) {
    OVERPASS_ERROR(
        "OVERPASS_TIMEOUT: the call cannot complete without world rank%s %s; "
        "aborting the job",
        culprits.size() > 1 ? "s" : "", rankRanges(culprits).c_str());
  } else {
    OVERPASS_ERROR("OVERPASS_TIMEOUT: no rank on this host is behind%s; aborting the job",
                   elsewhere.empty() ? " (a lost message, or a rank on no board)"
                                     : ": look for the cause among the ranks on other hosts");
  }
  // The rank that gives the details, and ranks that can see the cause, get a moment to report
  // before this abort ends them.
  if (!details || (culprits.empty() && !elsewhere.empty()))
    std::this_thread::sleep_for(kOthersFirst);
  abortJob();
}

// What the watchdog knows of a slot: the generation it saw last, since when, and when the
// call's progress count last moved.
struct Seen {
  std::uint64_t generation = 0, progress = 0;
  std::int64_t sinceNs = 0, movedNs = 0;
};

// This rank's entry on the board, written here rather than by the calls themselves (a tick
// late at most): the call stuck longest, else the one that returned last.
void publishBoard(const std::array<Seen, kSlots>& seen) {
  State& s = state();
  int chosen = -1;
  bool inCall = false;
  for (int i = 0; i < kSlots; ++i) {
    const Slot& slot = s.slots[i];
    if (!slot.claimed.load(std::memory_order_acquire) || seen[i].generation == 0) continue;
    const bool in = seen[i].generation & 1;
    if (chosen < 0 || (in && !inCall) ||
        (in == inCall &&
         (in ? seen[i].sinceNs < seen[chosen].sinceNs : seen[i].sinceNs > seen[chosen].sinceNs))) {
      chosen = i;
      inCall = in;
    }
  }
  if (chosen < 0) return;
  const Slot& slot = s.slots[chosen];
  BoardRecord r;
  r.pid = s.pid;
  r.what = slot.what.load(std::memory_order_relaxed);
  r.commKey = slot.commKey.load(std::memory_order_relaxed);
  r.call = slot.call.load(std::memory_order_relaxed);
  r.inCall = inCall;
  r.sinceNs = seen[chosen].sinceNs;
  // A call that began or ended while these were read is published at the next tick.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (slot.generation.load(std::memory_order_relaxed) != seen[chosen].generation) return;
  s.board->publish(s.myIndex, r);
}

// How long a slot's call may go without progress: the timeout; Overpass's start-up (many steps,
// UCX's connections among them, none of which notes progress) at least kPhaseMinNs.
std::int64_t limit(const Slot& slot) {
  const std::int64_t timeout = state().timeoutNs;
  return slot.what.load(std::memory_order_relaxed) == BoardRecord::kStartup
             ? std::max(timeout, kPhaseMinNs)
             : timeout;
}

void run() {
  State& s = state();
  std::array<Seen, kSlots> seen{};
  std::unique_lock lock(s.mutex);
  std::int64_t lastTick = monotonicNs();
  const std::int64_t tickNs = std::chrono::nanoseconds(s.tick).count();
  while (!s.stop) {
    s.wake.wait_for(lock, s.tick);
    if (s.stop) break;
    const std::int64_t now = monotonicNs();
    // A tick far too late: the whole process was suspended (a scheduler's suspend, a debugger, a
    // paused VM). Its calls could not progress either: their clocks start again.
    const bool resumed = now - lastTick > std::max(3 * tickNs, s.timeoutNs / 4);
    lastTick = now;
    if (resumed)
      for (Seen& v : seen) v.movedNs = now;
    for (int i = 0; i < kSlots; ++i) {
      const Slot& slot = s.slots[i];
      if (!slot.claimed.load(std::memory_order_acquire)) continue;
      const std::uint64_t g = slot.generation.load(std::memory_order_acquire);
      const std::uint64_t p = slot.progress.load(std::memory_order_relaxed);
      if (seen[i].generation != g) {
        seen[i] = {g, p, now, now};
      } else if (seen[i].progress != p) {
        seen[i].progress = p;
        seen[i].movedNs = now;
      } else if ((g & 1) && now - seen[i].movedNs > limit(slot)) {
        // The call may have returned since: then its communicator may be gone too.
        if (slot.generation.load(std::memory_order_acquire) == g) fire(slot, now - seen[i].movedNs);
      }
    }
    if (s.boardReady.load(std::memory_order_acquire)) {
      s.board->heartbeat(s.myIndex, now);
      publishBoard(seen);
    }
  }
}

}  // namespace

void startWatchdog(double timeoutSeconds, int worldRank) {
  if (timeoutSeconds <= 0) return;
  State& s = state();
  s.timeoutNs = static_cast<std::int64_t>(timeoutSeconds * 1e9);
  s.tick = std::chrono::milliseconds(
      std::clamp<std::int64_t>(static_cast<std::int64_t>(timeoutSeconds * 1000 / 10), 10, 100));
  s.staleNs =
      std::clamp<std::int64_t>(s.timeoutNs / 2, 5 * s.tick.count() * 1'000'000, 750'000'000);
  s.worldRank = worldRank;
  s.pid = static_cast<long>(getpid());
  s.stop = false;
  // The watchdog takes none of the application's signals.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  s.thread = std::thread(run);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  watchdog_detail::gRunning.store(true, std::memory_order_release);
}

void attachProgressBoard(bool watching, Bootstrap& bootstrap) {
  if (!watching) return;
  State& s = state();
  struct Hello {
    char host[72];
    std::int64_t pid;
  } me{};
  gethostname(me.host, sizeof me.host - 1);
  me.pid = getpid();
  const int n = bootstrap.size(), rank = bootstrap.rank();
  std::vector<Hello> all(n);
  if (bootstrap.allgather(&me, all.data(), sizeof me) != Status::kOk) return;
  std::vector<int> boardIndex(n, -1);
  std::vector<long> pids(n);
  int leader = -1, count = 0;
  for (int r = 0; r < n; ++r) {
    pids[r] = static_cast<long>(all[r].pid);
    if (std::strncmp(all[r].host, me.host, sizeof me.host) != 0) continue;
    if (leader < 0) leader = r;
    boardIndex[r] = count++;
  }
  // The host's first rank creates the board; the others attach by its name; it unlinks the name
  // once every rank of the world has tried.
  char name[64] = "";
  std::unique_ptr<ShmArena> arena;
  std::string why;
  if (rank == leader) {
    std::random_device random;
    std::snprintf(name, sizeof name, "/overpass-board-%ld-%08x", static_cast<long>(me.pid),
                  random());
    arena = ProgressBoard::createArena(name, count, &why);
    if (!arena) name[0] = '\0';
  }
  // The name is unlinked however this ends: nothing is left in /dev/shm.
  struct Unlink {
    const char* name;
    ~Unlink() {
      if (name[0]) ShmArena::unlink(name);
    }
  } unlinkLater{name};
  std::vector<char> names(sizeof name * n);
  if (bootstrap.allgather(name, names.data(), sizeof name) != Status::kOk) return;
  const char* leaderName = names.data() + sizeof name * leader;
  if (rank != leader && leaderName[0]) {
    arena = ShmArena::attach(leaderName, &why);
    if (arena && arena->ranks() != count) arena.reset();
  }
  int attached = arena != nullptr;
  std::vector<int> flags(n);
  if (bootstrap.allgather(&attached, flags.data(), sizeof attached) != Status::kOk) return;
  // A rank of this host that could not map the board never publishes: not visible, never blamed.
  for (int r = 0; r < n; ++r)
    if (!flags[r]) boardIndex[r] = -1;
  if (!arena) {
    OVERPASS_WARN(
        "OVERPASS_TIMEOUT: no progress board on this host (%s): reports cannot say "
        "which rank is behind",
        why.empty() ? "the host's first rank could not create it" : why.c_str());
    return;
  }
  s.board = std::make_unique<ProgressBoard>(std::move(arena));
  s.boardIndex = std::move(boardIndex);
  s.pids = std::move(pids);
  s.hosts.clear();
  for (const Hello& h : all) s.hosts.emplace_back(h.host, strnlen(h.host, sizeof h.host));
  s.myIndex = s.boardIndex[rank];
  BoardRecord r;
  r.pid = s.pid;
  s.board->publish(s.myIndex, r);
  s.board->heartbeat(s.myIndex, monotonicNs());
  s.boardReady.store(true, std::memory_order_release);
}

void stopWatchdog() {
  State& s = state();
  if (!watchdog_detail::gRunning.exchange(false)) return;
  {
    std::lock_guard lock(s.mutex);
    s.stop = true;
  }
  s.wake.notify_all();
  s.thread.join();
  if (s.boardReady.load(std::memory_order_acquire)) {  // the heartbeat stops here: say why
    BoardRecord r;
    r.pid = s.pid;
    r.what = BoardRecord::kFinished;
    r.sinceNs = monotonicNs();
    s.board->publish(s.myIndex, r);
  }
  s.boardReady.store(false, std::memory_order_release);
  s.board.reset();
}

// The calls' side: a few stores into the thread's own slot; the watchdog does the rest.
void WatchedCall::enter(int what, MPI_Comm comm) {
  Slot* slot = threadSlot();
  if (!slot || tOwner.depth++ > 0) return;  // a nested call is part of the outer one
  slot->what.store(what, std::memory_order_relaxed);
  slot->comm.store(comm, std::memory_order_relaxed);
  slot->commKey.store(0, std::memory_order_relaxed);
  slot->call.store(0, std::memory_order_relaxed);
  // Only this thread writes the generation: odd while in a call.
  slot->generation.store(slot->generation.load(std::memory_order_relaxed) + 1,
                         std::memory_order_release);
  setProgressCounter(&slot->progress);
  slot_ = slot;
}

void WatchedCall::identify(std::uint64_t commKey, std::uint64_t call) {
  if (!slot_) return;
  slot_->commKey.store(commKey, std::memory_order_relaxed);
  slot_->call.store(call, std::memory_order_relaxed);
}

void WatchedCall::leave() {
  tOwner.depth = 0;
  setProgressCounter(nullptr);
  slot_->generation.store(slot_->generation.load(std::memory_order_relaxed) + 1,
                          std::memory_order_release);
}

std::uint64_t boardKey(MPI_Comm comm) {
  const std::vector<int> ranks = worldRanks(comm);
  return commKey(ranks.data(), static_cast<int>(ranks.size()));
}

}  // namespace overpass::shim
