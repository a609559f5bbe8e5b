// Teams spread over emulated nodes for the hierarchical algorithms' unit tests: layouts of ranks
// on nodes (equal, round-robin, unequal), a transport that counts the bytes each node sends to
// other nodes, and a runner that gives every node of two or more ranks its own arena.
#pragma once

#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loopback_team.h"
#include "shm/arena.h"
#include "shm/channel.h"
#include "topo/topology.h"

namespace overpass::test {

// A layout over several nodes: a name and the node of every rank.
struct NodeLayout {
  std::string name;
  Topology topo;
};

inline Topology placed(const std::vector<int>& nodes) {
  std::vector<RankPlace> places;
  for (int n : nodes) places.push_back({n, -1, -1});
  return Topology::build(places);
}

// perNode x nodes ranks on nodes of consecutive ranks, or dealt round-robin.
inline NodeLayout nodesOf(int perNode, int nodes, bool roundRobin) {
  std::vector<int> of(perNode * nodes);
  for (int r = 0; r < perNode * nodes; ++r) of[r] = roundRobin ? r % nodes : r / perNode;
  return {std::to_string(perNode) + "x" + std::to_string(nodes) + (roundRobin ? " rr" : ""),
          placed(of)};
}

// Nodes holding different numbers of ranks: a node of one rank beside larger ones (2+1+1, 3+1,
// 1+2: the smallest node first), three sizes (1+3+2), and ranks of a node not consecutive (3+1
// with rank 1 alone, 2+1+1 round-robin, 4+2+1 scattered).
inline std::vector<NodeLayout> unequalLayouts() {
  return {{"2+1+1", placed({0, 0, 1, 2})},
          {"3+1", placed({0, 0, 0, 1})},
          {"1+2", placed({0, 1, 1})},
          {"1+3+2", placed({0, 1, 1, 1, 2, 2})},
          {"3+1 rr", placed({0, 1, 0, 0})},
          {"2+1+1 rr", placed({0, 1, 2, 0})},
          {"4+2+1 rr", placed({1, 0, 1, 2, 0, 1, 1})}};
}

// Equal nodes (contiguous and round-robin) as in `sizes`, then the unequal layouts.
inline std::vector<NodeLayout> layoutsOver(std::initializer_list<std::pair<int, int>> sizes) {
  std::vector<NodeLayout> out;
  for (auto [perNode, nodes] : sizes)
    for (bool roundRobin : {false, true}) out.push_back(nodesOf(perNode, nodes, roundRobin));
  for (NodeLayout& l : unequalLayouts()) out.push_back(std::move(l));
  return out;
}

// Counts the bytes (and, with `messagesFrom`, the messages) each node sends to other nodes (the
// sends of `inner` to a rank of another node): where the hierarchical steps run, each node's
// traffic between nodes is what their plan says, while a flat algorithm sends more.
class CountingTransport final : public Transport {
 public:
  CountingTransport(Transport& inner, const Topology& topo, std::atomic<std::size_t>* acrossFrom,
                    std::atomic<std::size_t>* messagesFrom = nullptr)
      : inner_(inner), topo_(topo), acrossFrom_(acrossFrom), messagesFrom_(messagesFrom) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  Status start(std::span<const P2POp> ops, int tag, Request* request) override {
    const int node = topo_.nodeOf(rank());
    for (const P2POp& op : ops)
      if (op.kind == P2POp::Kind::kSend && topo_.nodeOf(op.peer) != node) {
        if (acrossFrom_) acrossFrom_[node] += op.bytes;
        if (messagesFrom_) ++messagesFrom_[node];
      }
    return inner_.start(ops, tag, request);
  }
  Status test(Request& request, bool* done) override { return inner_.test(request, done); }
  Status wait(Request& request) override { return inner_.wait(request); }

 private:
  Transport& inner_;
  const Topology& topo_;
  std::atomic<std::size_t>* acrossFrom_;
  std::atomic<std::size_t>* messagesFrom_;
};

// The bytes of each rank's buffers in the nodes' arenas of runOverNodes.
inline constexpr std::size_t kNodeShmBuffer = 1024;

// Runs `body` on the ranks of `topo`, each node of two or more ranks with its own arena sized for
// its ranks (kNodeShmBuffer), as the shim sets them up; with `nodeShm` the node steps of the
// hierarchical algorithms go through it (a node of one rank has none). With `acrossFrom` and
// `messagesFrom` (one counter per node), the bytes and the messages each node sends to other
// nodes are counted there.
inline void runOverNodes(const Topology& topo, bool nodeShm, const std::function<void(Team&)>& body,
                         std::atomic<std::size_t>* acrossFrom = nullptr,
                         std::atomic<std::size_t>* messagesFrom = nullptr) {
  std::vector<std::unique_ptr<ShmArena>> arenas;
  for (int j = 0; j < topo.nodeCount(); ++j)
    arenas.push_back(topo.nodeSize(j) >= 2 ? ShmArena::anonymous(topo.nodeSize(j), kNodeShmBuffer)
                                           : nullptr);
  runTeam(topo.size(), [&](Team& team) {
    const int r = team.rank();
    std::optional<ShmChannel> channel;
    if (ShmArena* arena = arenas[topo.nodeOf(r)].get())
      channel.emplace(*arena, topo.localRank(r), static_cast<long>(getpid()), crowded(topo.size()));
    std::optional<CountingTransport> counting;
    if (acrossFrom || messagesFrom)
      counting.emplace(team.transport, topo, acrossFrom, messagesFrom);
    Team over{counting ? *counting : team.transport, team.scratch, team.shm};
    over.streamAbove = team.streamAbove;
    over.topology = &topo;
    if (nodeShm && channel) over.nodeShm = &*channel;
    over.nodeShmBuffer = nodeShm ? kNodeShmBuffer : 0;
    body(over);
  });
}

}  // namespace overpass::test
