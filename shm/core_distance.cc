#include "shm/core_distance.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "common/log.h"
#include "shm/channel.h"

namespace overpass {
namespace {

// Rounds timed per reading, and the time of one (the median) above which the peer's core is far:
// a round costs about half a cache line's round trip between the two cpus (tools/line_probe.h):
// 266-591 ns per round (the mean of 8) where that read 560-720 ns (the slow state); the fast
// state's 60-120 ns put a round near 30-60 ns.
constexpr int kRounds = 8;
constexpr double kFarRoundNs = 200;

}  // namespace

std::string_view coreDistanceName(CoreDistance d) {
  switch (d) {
    case CoreDistance::kNear:
      return "near";
    case CoreDistance::kFar:
      return "far";
    case CoreDistance::kUnread:
      break;
  }
  return "unread";
}

Status paceCoreDistance(ShmChannel& ch, std::optional<bool> mine, bool* changed) {
  *changed = false;
  CoreReading& reading = ch.cores();
  const bool due = reading.due(ch.size());
  ++reading.calls;
  if (!due) return Status::kOk;
  OVERPASS_CHECK(ch.sync());  // both ranks here: the rounds below time the transfers only
  std::array<double, kRounds> ns{};
  for (double& t : ns) {
    const auto start = std::chrono::steady_clock::now();
    OVERPASS_CHECK(ch.sync());
    t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  }
  // The median: a round that lost the core to another process (a time slice) says nothing of
  // the distance.
  std::sort(ns.begin(), ns.end());
  const double roundNs = (ns[kRounds / 2 - 1] + ns[kRounds / 2]) / 2;
  const bool farHere = mine ? *mine : roundNs > kFarRoundNs && !ch.crowded();
  OVERPASS_CHECK(ch.reserve());
  *ch.next(1) = farHere;  // this rank's verdict, one byte
  OVERPASS_CHECK(ch.sync());
  bool far = false;
  for (int q = 0; q < ch.size(); ++q) far = far || *ch.peer(q, 1);
  const CoreDistance agreed = far ? CoreDistance::kFar : CoreDistance::kNear;
  OVERPASS_DEBUG("cores: a round with the peer %.0f ns (%s here%s): the team's cores %s", roundNs,
                 farHere ? "far" : "near", mine ? ", as configured" : "",
                 coreDistanceName(agreed).data());
  *changed = agreed != reading.agreed;
  reading.agreed = agreed;
  return Status::kOk;
}

}  // namespace overpass
