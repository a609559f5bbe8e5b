// Runs a function on `size` ranks, each a thread with its own Team over one loopback fabric and
// one shared-memory arena (private memory shared by the threads; small buffers, so that the shm
// algorithms go through many rounds even for small vectors).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coll/team.h"
#include "common/fiber.h"
#include "shm/arena.h"
#include "shm/channel.h"
#include "transport/loopback_transport.h"

namespace overpass::test {

inline constexpr std::size_t kTestShmBuffer = 1024;
// Results above this are copied around the cache (Team::streamAbove): the large tests take that
// path, the small ones the plain copy.
inline constexpr std::size_t kTestStreamAbove = 4096;

// With OVERPASS_TEST_RANKS_AS_FIBERS=1 in the environment, the ranks run as fibers on the calling
// thread instead (common/fiber.h), resumed in turn: an algorithm passes only if every wait in it
// yields when it finds nothing to do, as the nonblocking collectives need (shim/nonblocking.h).
inline bool ranksAsFibers() {
  static const bool on = [] {
    const char* v = std::getenv("OVERPASS_TEST_RANKS_AS_FIBERS");
    return v && std::string(v) == "1";
  }();
  return on;
}

// Whether `ranks` threads outnumber the cores: their shared-memory waits then give the core away,
// as the shim's channels do where ranks outnumber cores (shm/channel.h).
inline bool crowded(int ranks) {
  return static_cast<unsigned>(ranks) > std::thread::hardware_concurrency();
}

inline void runTeam(int size, const std::function<void(Team&)>& body) {
  LoopbackFabric fabric(size);
  auto arena = ShmArena::anonymous(size, kTestShmBuffer);
  auto rank = [&fabric, &body, &arena, size](int r) {
    LoopbackTransport transport(fabric, r);
    Scratch scratch;
    ShmChannel channel(*arena, r, static_cast<long>(getpid()), crowded(size));
    Team team{transport, scratch, &channel};
    team.streamAbove = kTestStreamAbove;
    body(team);
  };
  if (ranksAsFibers()) {
    std::vector<std::unique_ptr<Fiber>> fibers;
    for (int r = 0; r < size; ++r)
      fibers.push_back(std::make_unique<Fiber>([&rank, r] { rank(r); }));
    for (bool running = true; running;) {
      running = false;
      for (auto& f : fibers)
        if (!f->done()) {
          f->resume();
          running = running || !f->done();
        }
    }
    return;
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) threads.emplace_back(rank, r);
  for (auto& t : threads) t.join();
}

}  // namespace overpass::test
