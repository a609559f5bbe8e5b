// Runs a function on `size` ranks, each a thread with its own Team over one loopback fabric.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "coll/team.h"
#include "ucx_transport/loopback_transport.h"

namespace overpass::test {

inline void runTeam(int size, const std::function<void(Team&)>& body) {
  LoopbackFabric fabric(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&fabric, &body, r] {
      LoopbackTransport transport(fabric, r);
      Scratch scratch;
      Team team{transport, scratch};
      body(team);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace overpass::test
