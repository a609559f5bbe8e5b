// A Transport over a subset of another transport's ranks (a node, a rail): sub-rank i is the
// parent's rank members[i]. Operations are forwarded with their peers translated, so the
// algorithms of coll/ run unchanged on sub-groups (the hierarchical compositions).
#pragma once

#include <span>
#include <vector>

#include "transport/transport.h"

namespace overpass {

class SubTransport final : public Transport {
 public:
  // `members`: parent ranks in sub-rank order; the calling rank must be one of them.
  SubTransport(Transport& parent, std::span<const int> members)
      : parent_(parent), members_(members.begin(), members.end()) {
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (members_[i] == parent.rank()) rank_ = static_cast<int>(i);
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }

  Status start(std::span<const P2POp> ops, int tag, Request* request) override {
    P2POp local[8];
    std::vector<P2POp> many;
    P2POp* translated = local;
    if (ops.size() > 8) {
      many.resize(ops.size());
      translated = many.data();
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      translated[i] = ops[i];
      translated[i].peer = members_[ops[i].peer];
    }
    return parent_.start({translated, ops.size()}, tag, request);
  }
  Status test(Request& request, bool* done) override { return parent_.test(request, done); }
  Status wait(Request& request) override { return parent_.wait(request); }

 private:
  Transport& parent_;
  std::vector<int> members_;
  int rank_ = -1;
};

}  // namespace overpass
