// The shape of a communicator: which of its ranks share a node, a socket, a NUMA domain; node
// leaders, local ranks, rails; whether the layout is balanced (every node holds as many ranks)
// and contiguous. Built from plain per-rank places, so every rank computes the same Topology
// without communicating, and tests inject any layout.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace overpass {

// A rank's place: its node (any id; equal ids share a node), socket and NUMA node within the
// node (-1 when unknown or unbound: such ranks share a group of their own on that node).
struct RankPlace {
  int node = 0;
  int socket = -1;
  int numa = -1;
};

class Topology {
 public:
  Topology() = default;
  // Nodes are numbered in the order of their lowest rank, so node 0 holds rank 0.
  static Topology build(std::span<const RankPlace> places);

  int size() const { return static_cast<int>(nodeOf_.size()); }
  int nodeCount() const { return static_cast<int>(nodes_.size()); }
  int nodeOf(int rank) const { return nodeOf_[rank]; }
  int localRank(int rank) const { return localRank_[rank]; }
  // Ranks of one node, increasing.
  const std::vector<int>& nodeRanks(int node) const { return nodes_[node]; }
  const std::vector<std::vector<int>>& nodes() const { return nodes_; }
  // The lowest rank of each node, in node order.
  const std::vector<int>& leaders() const { return leaders_; }
  // rails()[k]: the k-th local rank of every node that has one, in node order.
  const std::vector<std::vector<int>>& rails() const { return rails_; }
  // One rank of every node, in node order: the one at local rank `local` modulo the node's rank
  // count. rails()[local] where every node has more than `local` ranks (always when balanced);
  // on unequal nodes the smaller nodes take part through an earlier local rank.
  std::vector<int> fullRail(int local) const;
  // Ranks grouped by (node, NUMA node) and (node, socket), each group increasing, groups in the
  // order of their lowest rank.
  const std::vector<std::vector<int>>& numaGroups() const { return numaGroups_; }
  const std::vector<std::vector<int>>& socketGroups() const { return socketGroups_; }

  int nodeSize(int node) const { return static_cast<int>(nodes_[node].size()); }
  int maxRanksPerNode() const { return maxPerNode_; }
  bool balanced() const { return balanced_; }      // every node has the same number of ranks
  bool contiguous() const { return contiguous_; }  // each node's ranks are consecutive
  bool singleNode() const { return nodeCount() == 1; }
  bool onePerNode() const { return maxPerNode_ == 1; }

  // One line: "2 nodes x 4 ranks (balanced, contiguous)" or "2 nodes: 3+5 ranks (...)".
  std::string summary() const;

 private:
  std::vector<int> nodeOf_, localRank_, leaders_;
  std::vector<std::vector<int>> nodes_, rails_, numaGroups_, socketGroups_;
  int maxPerNode_ = 0;
  bool balanced_ = true, contiguous_ = true;
};

}  // namespace overpass
