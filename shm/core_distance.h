// How far apart the two cores of a two-rank node team sit now, read by both ranks together.
//
// On virtual machines the time a cache line takes between two cpus changes while a job runs, with
// where the host places them (docs/PERFORMANCE.md, "The machine has two states": a line's round
// trip 60-120 ns for minutes, then 460-1355 ns), and with it which algorithm is the faster one.
// A reading: after one round that gathers both ranks, each times 8 back-to-back rounds of the
// channel (each one cross-core transfer of a stamp: about half the round trip), takes its verdict
// (far: the median round over 200 ns and the two ranks not sharing a core, where a round is a
// switch between them; or the one OVERPASS_CORE_DISTANCE names) and publishes it in one more
// round. The team's cores are far where either rank's verdict says so: both compute the same from
// the same two verdicts, so choices by it (the tune key cores=, coll/select/tune.h; the cma
// allreduce's store policy) take the same path on both ranks.
//
// A reading is taken at the first of every kEvery calls counted (shim/dispatch.cc counts the
// communicator's blocking calls, which every rank makes in the same order; never inside a
// nonblocking one, whose waits hand the thread back to the program), so the count, and with it
// the rounds, are the same on both ranks. Other channel sizes: never read (kUnread).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace overpass {

class ShmChannel;

enum class CoreDistance : std::uint8_t { kUnread, kNear, kFar };
std::string_view coreDistanceName(CoreDistance d);  // "unread", "near", "far"

// Stored in the channel (ShmChannel::cores()).
struct CoreReading {
  static constexpr std::uint64_t kEvery = 1024;
  std::uint64_t calls = 0;  // counted so far
  CoreDistance agreed = CoreDistance::kUnread;

  // Whether the next call counted takes a reading (two ranks only).
  bool due(int teamSize) const { return teamSize == 2 && calls % kEvery == 0; }
};

// Counts one call of the channel's team; at a due one reads the distance with the peer (both
// ranks must count alike). `mine`: this rank's verdict as given (true: far), instead of measured.
// *changed: the agreed distance is not the one before. A channel error where a round fails.
Status paceCoreDistance(ShmChannel& ch, std::optional<bool> mine, bool* changed);

}  // namespace overpass
