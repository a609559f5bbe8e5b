#include "topo/topology.h"

#include <algorithm>
#include <map>
#include <utility>

namespace overpass {
namespace {

// Groups ranks by key, groups ordered by their lowest rank, ranks increasing.
template <class Key>
std::vector<std::vector<int>> groupBy(int size, Key key) {
  std::map<decltype(key(0)), int> index;
  std::vector<std::vector<int>> groups;
  for (int r = 0; r < size; ++r) {
    auto [it, fresh] = index.emplace(key(r), static_cast<int>(groups.size()));
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

}  // namespace

Topology Topology::build(std::span<const RankPlace> places) {
  Topology t;
  const int size = static_cast<int>(places.size());
  t.nodes_ = groupBy(size, [&](int r) { return places[r].node; });
  t.nodeOf_.assign(size, 0);
  t.localRank_.assign(size, 0);
  for (int n = 0; n < t.nodeCount(); ++n) {
    const auto& ranks = t.nodes_[n];
    t.leaders_.push_back(ranks.front());
    t.maxPerNode_ = std::max(t.maxPerNode_, static_cast<int>(ranks.size()));
    t.balanced_ = t.balanced_ && ranks.size() == t.nodes_[0].size();
    t.contiguous_ =
        t.contiguous_ && ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      t.nodeOf_[ranks[i]] = n;
      t.localRank_[ranks[i]] = static_cast<int>(i);
    }
  }
  t.rails_.assign(t.maxPerNode_, {});
  for (const auto& ranks : t.nodes_)
    for (std::size_t i = 0; i < ranks.size(); ++i) t.rails_[i].push_back(ranks[i]);
  t.numaGroups_ =
      groupBy(size, [&](int r) { return std::make_pair(t.nodeOf_[r], places[r].numa); });
  t.socketGroups_ =
      groupBy(size, [&](int r) { return std::make_pair(t.nodeOf_[r], places[r].socket); });
  return t;
}

std::vector<int> Topology::fullRail(int local) const {
  std::vector<int> rail;
  rail.reserve(nodes_.size());
  for (const auto& ranks : nodes_) rail.push_back(ranks[local % ranks.size()]);
  return rail;
}

std::string Topology::summary() const {
  std::string out = std::to_string(nodeCount()) + (nodeCount() == 1 ? " node" : " nodes");
  if (balanced_) {
    out += " x " + std::to_string(maxPerNode_) + (maxPerNode_ == 1 ? " rank" : " ranks");
  } else {
    out += ": ";
    for (int n = 0; n < nodeCount(); ++n) out += (n ? "+" : "") + std::to_string(nodes_[n].size());
    out += " ranks";
  }
  out += balanced_ ? " (balanced" : " (unbalanced";
  out += contiguous_ ? ", contiguous)" : ", not contiguous)";
  return out;
}

}  // namespace overpass
