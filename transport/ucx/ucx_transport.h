// The UCX transport: Overpass's own UCP context and worker, beside (not through) the MPI library,
// which may itself use UCX (pml ucx) or not (ob1). The only code that includes UCX headers is
// ucx_transport.cc.
//
// One context and worker per process; worker addresses exchanged once over the world through the
// Bootstrap (ranks on this host get the full address, ranks on other hosts the address of the
// network transports only, so that no shared-memory transport is tried across hosts); endpoints
// created on first use and cached by world rank. Messages are tagged with
// (communicator id, algorithm tag, source rank), so communicators and algorithm steps never match
// each other's messages, and back-to-back collectives match in order (UCX keeps the order of
// messages on an endpoint). Large messages go by UCX rendezvous, zero-copy where the transports
// allow (CMA between processes of a node, RDMA between nodes), with UCX's registration cache.
// A progress thread progresses the worker while no Overpass call does, as the MPI library
// progresses its own transports in every MPI call: what a returned call left in UCX's hands
// (bytes a socket had no room for, acknowledgements) reaches the peers while the application
// waits elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/bootstrap.h"
#include "transport/transport.h"

namespace overpass {

struct UcxOptions {
  bool multiThread = false;     // MPI_THREAD_MULTIPLE: the worker is shared by threads
  std::string rndvThresh;       // OVERPASS_UCX_RNDV_THRESH ("" = UCX's own default)
  bool oversubscribed = false;  // more ranks than cores on this node: yield while polling
  std::vector<bool> sameHost;   // by world rank: runs on this host (shared memory reachable)
  std::vector<int> pids;        // by world rank: process id of the ranks on this host, else 0
};

class UcxContext;

// A transport for one communicator over the process's UCX context.
class UcxTransport final : public Transport {
 public:
  // `worldRanks[i]` is the world rank of communicator rank i; `commId` is agreed by all ranks of
  // the communicator; `name` names it in error reports.
  UcxTransport(UcxContext& context, std::vector<int> worldRanks, int rank, std::uint32_t commId,
               std::string name);
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(worldRanks_.size()); }
  Status start(std::span<const P2POp> ops, int tag, Request* request) override;
  Status test(Request& request, bool* done) override;
  Status wait(Request& request) override;

 private:
  Status advance(Request& request, bool block, bool* done);
  std::string describe(const P2POp& op, int tag) const;

  UcxContext& context_;
  std::vector<int> worldRanks_;
  int rank_;
  std::uint32_t commId_;
  std::string name_;
};

class UcxContext {
 public:
  // Creates the context and worker and exchanges worker addresses over the bootstrap (a
  // collective over the world). Returns nullptr with *error set when UCX cannot start here.
  static std::unique_ptr<UcxContext> create(const UcxOptions& options, Bootstrap& bootstrap,
                                            std::string* error);
  ~UcxContext();
  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;

  // Creates the endpoints to every rank and completes their wire-up (a collective over the
  // world): messages sent before an endpoint is wired up are slow (~15 us each here).
  Status connectAll(Bootstrap& bootstrap);

  // The job is ending: no more messages, and from here on a peer may close its endpoints at any
  // time (before the barrier that precedes this context's destruction), which is not reported.
  void closing();

  // The UCX transports an endpoint to `worldRank` uses, e.g. "posix/memory cma/memory".
  std::string describePath(int worldRank);

  struct Impl;

 private:
  explicit UcxContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class UcxTransport;
};

// Bits of the tag: communicator id, algorithm tag, source rank.
inline constexpr int kTagCommBits = 24, kTagUserBits = 16, kTagRankBits = 24;
constexpr std::uint64_t makeUcxTag(std::uint32_t comm, int tag, int source) {
  return (static_cast<std::uint64_t>(comm & ((1u << kTagCommBits) - 1))
          << (kTagUserBits + kTagRankBits)) |
         (static_cast<std::uint64_t>(static_cast<unsigned>(tag) & ((1u << kTagUserBits) - 1))
          << kTagRankBits) |
         (static_cast<std::uint64_t>(static_cast<unsigned>(source) & ((1u << kTagRankBits) - 1)));
}

}  // namespace overpass
