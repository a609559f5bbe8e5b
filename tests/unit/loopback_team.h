// Runs a function on `size` ranks, each a thread with its own Team over one loopback fabric and
// one shared-memory arena (private memory shared by the threads; small buffers, so that the shm
// algorithms go through many rounds even for small vectors).
#pragma once

#include <unistd.h>

#include <functional>
#include <thread>
#include <vector>

#include "coll/team.h"
#include "shm/arena.h"
#include "shm/channel.h"
#include "transport/loopback_transport.h"

namespace overpass::test {

inline constexpr std::size_t kTestShmBuffer = 1024;
// Results above this are copied around the cache (Team::streamAbove): the large tests take that
// path, the small ones the plain copy.
inline constexpr std::size_t kTestStreamAbove = 4096;

inline void runTeam(int size, const std::function<void(Team&)>& body) {
  LoopbackFabric fabric(size);
  auto arena = ShmArena::anonymous(size, kTestShmBuffer);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&fabric, &body, &arena, r] {
      LoopbackTransport transport(fabric, r);
      Scratch scratch;
      ShmChannel channel(*arena, r, static_cast<long>(getpid()));
      Team team{transport, scratch, &channel};
      team.streamAbove = kTestStreamAbove;
      body(team);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace overpass::test
