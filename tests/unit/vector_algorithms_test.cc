// The vector collectives and the scans against serial references, on teams of threads over the
// loopback transport: random irregular counts with zeros (on some ranks and on all), blocks in a
// shuffled order with gaps that must stay untouched, every root, in place and not; the scans on
// a non-commutative operation, whose order every algorithm must keep.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "coll/select/registry.h"
#include "coll/select/selector.h"
#include "common/config.h"
#include "kernels/reduce_kernels.h"
#include "loopback_team.h"
#include "over_nodes.h"
#include "shm/channel.h"

namespace overpass {
namespace {

using test::runTeam;

constexpr unsigned char kGarbage = 0xEE;

// The host algorithms of `coll` that serve teams on one node (the hierarchical ones are tested over
// emulated nodes below).
std::vector<const Algorithm*> algorithmsOf(Collective coll) {
  CallShape oneNode;
  oneNode.coll = coll;
  oneNode.teamSize = 8;
  oneNode.maxPerNode = 8;
  oneNode.shmBuffer = test::kTestShmBuffer;
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : algorithms())
    if (a.coll == coll && a.kind == AlgorithmKind::kHost && (!a.serves || a.serves(oneNode)))
      out.push_back(&a);
  return out;
}

// Element i of rank r's block for rank q (int32).
std::int32_t value(int r, int q, std::size_t i) {
  return static_cast<std::int32_t>(r * 1000003 + q * 7919 + static_cast<int>(i) * 31 + 1);
}

// Per-rank counts in elements: random in [0, 40] with about a third zero; pattern 1: all zero;
// pattern 2: random in [0, 700] with about a third zero (blocks past a 1 KiB shm buffer);
// pattern 3: random in [0, 2], more than a third zero.
std::vector<std::size_t> randomCounts(int p, unsigned seed, int pattern) {
  std::mt19937 gen(seed);
  std::vector<std::size_t> c(p);
  const unsigned most = pattern == 2 ? 701 : pattern == 3 ? 3 : 41;
  for (auto& x : c) x = pattern == 1 ? 0 : (gen() % 3 == 0 ? 0 : gen() % most);
  return c;
}

// Byte offsets of blocks of `counts` int32 elements, placed in a shuffled order with gaps.
struct Layout {
  std::vector<std::size_t> bytes;
  std::vector<std::ptrdiff_t> offset;
  std::size_t span = 0;
  BlockLayout view() const { return {bytes.data(), offset.data()}; }
};
Layout shuffled(const std::vector<std::size_t>& counts, unsigned seed) {
  const int p = static_cast<int>(counts.size());
  std::mt19937 gen(seed);
  std::vector<int> order(p);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), gen);
  Layout l;
  l.bytes.resize(p);
  l.offset.resize(p);
  for (int q : order) {
    l.span += (gen() % 3) * sizeof(std::int32_t);  // a gap
    l.offset[q] = static_cast<std::ptrdiff_t>(l.span);
    l.bytes[q] = counts[q] * sizeof(std::int32_t);
    l.span += l.bytes[q];
  }
  l.span += sizeof(std::int32_t);
  return l;
}

// Blocks of `counts` int32 elements back to back in rank order (the usual displacements).
Layout inRankOrder(const std::vector<std::size_t>& counts) {
  Layout l;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    l.offset.push_back(static_cast<std::ptrdiff_t>(l.span));
    l.bytes.push_back(counts[q] * sizeof(std::int32_t));
    l.span += l.bytes.back();
  }
  l.span += sizeof(std::int32_t);
  return l;
}

// Writes `n` values of (r, q) at `at`.
void fill(unsigned char* at, int r, int q, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t v = value(r, q, i);
    std::memcpy(at + i * sizeof v, &v, sizeof v);
  }
}

// Whether `buf` holds (r_of(q), q)'s values in every block of `l` and garbage elsewhere.
template <class Source>
void expectBlocks(const std::vector<unsigned char>& buf, const Layout& l, Source source,
                  const char* what) {
  std::vector<unsigned char> want(buf.size(), kGarbage);
  for (std::size_t q = 0; q < l.bytes.size(); ++q) {
    const auto [r, k] = source(static_cast<int>(q));
    fill(want.data() + l.offset[q], r, k, l.bytes[q] / sizeof(std::int32_t));
  }
  EXPECT_EQ(buf, want) << what;
}

TEST(VectorAlgorithms, AllgathervIrregularShuffledInAndOutOfPlace) {
  for (const Algorithm* alg : algorithmsOf(Collective::kAllgatherv))
    for (int p : {1, 2, 3, 4, 5, 7})
      for (int pattern : {0, 1})
        for (bool inPlace : {false, true}) {
          const auto counts = randomCounts(p, 11u * p + pattern, pattern);
          const Layout l = shuffled(counts, 5u * p);
          runTeam(p, [&](Team& team) {
            const int r = team.rank();
            std::vector<unsigned char> out(l.span, kGarbage), in(l.bytes[r] + 1);
            CollArgs a;
            a.coll = Collective::kAllgatherv;
            a.recvbuf = out.data();
            a.recvBlocks = l.view();
            a.bytes = l.bytes[r];
            if (inPlace) {
              fill(out.data() + l.offset[r], r, 0, counts[r]);
              a.sendbuf = out.data() + l.offset[r];
            } else {
              fill(in.data(), r, 0, counts[r]);
              a.sendbuf = in.data();
            }
            ASSERT_EQ(alg->run(a, team), Status::kOk) << alg->name;
            expectBlocks(
                out, l,
                [](int q) {
                  return std::pair{q, 0};
                },
                alg->name.data());
          });
        }
}

// counts[s][d]: the elements rank s sends rank d, random in `pattern`.
std::vector<std::vector<std::size_t>> alltoallvCounts(int p, int pattern) {
  std::vector<std::vector<std::size_t>> counts(p);
  for (int s = 0; s < p; ++s) counts[s] = randomCounts(p, 97u * s + p + pattern, pattern);
  return counts;
}

// Runs `alg` on `team` with `counts` (each rank knowing only its own row and column), every
// rank's blocks shuffled with gaps; checks every block received and the gaps untouched where it
// ran. Returns what the algorithm returned.
Status alltoallvChecked(const Algorithm& alg, Team& team,
                        const std::vector<std::vector<std::size_t>>& counts, const char* what) {
  const int r = team.rank(), p = team.size();
  std::vector<std::size_t> from(p);
  for (int s = 0; s < p; ++s) from[s] = counts[s][r];
  const Layout send = shuffled(counts[r], 3u * r + 1), recv = shuffled(from, 7u * r + 2);
  std::vector<unsigned char> in(send.span, kGarbage), out(recv.span, kGarbage);
  for (int d = 0; d < p; ++d) fill(in.data() + send.offset[d], r, d, counts[r][d]);
  CollArgs a;
  a.coll = Collective::kAlltoallv;
  a.sendbuf = in.data();
  a.recvbuf = out.data();
  a.sendBlocks = send.view();
  a.recvBlocks = recv.view();
  const Status status = alg.run(a, team);
  if (status == Status::kOk)
    expectBlocks(
        out, recv,
        [r](int s) {
          return std::pair{s, r};
        },
        what);
  return status;
}

// The shm alltoallv reads the blocks larger than one slot from the senders' memory (pattern 2:
// past the 1 KiB buffer's slots), or, where the ranks may not read each other's (the channel's
// agreement set to no), sends their first slot through the round and the rest through the
// transport: both ways. Pattern 3: blocks of up to 2 elements.
TEST(VectorAlgorithms, AlltoallvEachRankKnowsOnlyItsOwnCounts) {
  for (const Algorithm* alg : algorithmsOf(Collective::kAlltoallv))
    for (bool peerReads : {true, false}) {
      if (!peerReads && alg->name != "shm") continue;
      const std::string what = std::string(alg->name) + (peerReads ? "" : " without peer reads");
      for (int p : {1, 2, 3, 4, 5, 7})
        for (int pattern : {0, 1, 2, 3}) {
          const auto counts = alltoallvCounts(p, pattern);
          runTeam(p, [&](Team& team) {
            if (!peerReads && team.shm) team.shm->setPeerReads(ShmChannel::PeerReads::kNo);
            EXPECT_EQ(alltoallvChecked(*alg, team, counts, what.c_str()), Status::kOk) << what;
          });
        }
    }
}

// The hierarchical alltoallv over emulated nodes (equal, round-robin, unequal, nodes of one
// rank): with the nodes' 1 KiB buffers, blocks of up to 21-224 bytes (by layout) are aggregated,
// so random counts of 0-160 bytes (pattern 0) and 0-2800 bytes (pattern 2) mix aggregated and
// direct blocks; pattern 1 has none. Without node channels it declines on every rank. With every
// block of 16 bytes (aggregated on every layout), each node sends exactly one message to each
// rank of the other nodes (a flat algorithm: one per pair of ranks).
TEST(VectorAlgorithms, AlltoallvHierarchicalOverNodes) {
  const Algorithm& alg = *findAlgorithm(Collective::kAlltoallv, "hierarchical");
  for (const test::NodeLayout& layout : test::layoutsOver({{2, 2}, {3, 2}, {2, 3}, {4, 2}})) {
    const Topology& topo = layout.topo;
    const int p = topo.size();
    for (int pattern : {0, 1, 2})
      for (bool nodeShm : {false, true}) {
        const auto counts = alltoallvCounts(p, pattern);
        const std::string what = layout.name + " pattern " + std::to_string(pattern);
        test::runOverNodes(topo, nodeShm, [&](Team& team) {
          EXPECT_EQ(alltoallvChecked(alg, team, counts, what.c_str()),
                    nodeShm ? Status::kOk : Status::kDeclined)
              << what << " rank " << team.rank();
        });
      }
    std::vector<std::vector<std::size_t>> full(p, std::vector<std::size_t>(p, 4));
    std::vector<std::atomic<std::size_t>> messages(topo.nodeCount());
    test::runOverNodes(
        topo, true,
        [&](Team& team) {
          EXPECT_EQ(alltoallvChecked(alg, team, full, layout.name.c_str()), Status::kOk);
        },
        nullptr, messages.data());
    for (int b = 0; b < topo.nodeCount(); ++b)
      EXPECT_EQ(messages[b], static_cast<std::size_t>(p - topo.nodeSize(b)))
          << layout.name << " node " << b;
  }
}

// Runs `alg` on the call; true where it declined, which only the hierarchical algorithms do here
// (teams of one node) and only where the registry's serves rejects the call's shape (alike on
// every rank: the shape holds no size, as every gatherv's and scatterv's).
bool declined(const Algorithm& alg, const CollArgs& a, Team& team) {
  const Status s = alg.run(a, team);
  if (s == Status::kDeclined) {
    CallShape shape;
    shape.coll = a.coll;
    shape.teamSize = team.size();
    shape.shmBuffer = team.shm ? team.shm->bufferBytes() : 0;
    const Topology* t = team.topology;
    const bool spread = t && t->size() == team.size();
    shape.nodes = spread ? t->nodeCount() : 1;
    shape.maxPerNode = spread ? t->maxRanksPerNode() : team.size();
    EXPECT_TRUE(alg.serves && !alg.serves(shape))
        << collectiveName(alg.coll) << " " << alg.name << " declined a call it serves";
    return true;
  }
  EXPECT_EQ(s, Status::kOk) << collectiveName(alg.coll) << " " << alg.name;
  return s != Status::kOk;
}

// One gatherv or scatterv of `alg` on `team` with blocks of `counts` elements laid out as `l` at
// the root, checked: the root's recvbuf (gatherv; gaps untouched) or every rank's recvbuf
// (scatterv; in place at the root, left alone).
void rootedCall(const Algorithm& alg, Team& team, const std::vector<std::size_t>& counts,
                const Layout& l, int root, bool inPlace, const std::string& what) {
  const Collective coll = alg.coll;
  const int p = team.size(), r = team.rank();
  const bool isRoot = r == root, here = isRoot && inPlace;
  std::vector<unsigned char> whole(isRoot ? l.span : 0, kGarbage);
  std::vector<unsigned char> mine(l.bytes[r] + 1, kGarbage);
  CollArgs a;
  a.coll = coll;
  a.root = root;
  a.bytes = l.bytes[r];
  if (coll == Collective::kGatherv) {
    fill(here ? whole.data() + l.offset[r] : mine.data(), r, 0, counts[r]);
    a.sendbuf = here ? whole.data() + l.offset[r] : mine.data();
    if (isRoot) {
      a.recvbuf = whole.data();
      a.recvBlocks = l.view();
    }
  } else {
    if (isRoot) {
      for (int q = 0; q < p; ++q) fill(whole.data() + l.offset[q], root, q, counts[q]);
      a.sendbuf = whole.data();
      a.sendBlocks = l.view();
    }
    a.recvbuf = here ? whole.data() + l.offset[r] : mine.data();
  }
  const std::string where = std::string(alg.name) + " " + what;
  if (declined(alg, a, team)) return;
  if (coll == Collective::kGatherv) {
    if (isRoot)
      expectBlocks(
          whole, l,
          [](int q) {
            return std::pair{q, 0};
          },
          where.c_str());
  } else if (here) {
    expectBlocks(
        whole, l,
        [root](int q) {
          return std::pair{root, q};
        },
        where.c_str());
  } else {
    std::vector<unsigned char> want(mine.size(), kGarbage);
    fill(want.data(), root, r, counts[r]);
    EXPECT_EQ(mine, want) << where << " rank " << r;
  }
}

TEST(VectorAlgorithms, GathervAndScattervEveryRootInAndOutOfPlace) {
  for (Collective coll : {Collective::kGatherv, Collective::kScatterv})
    for (const Algorithm* alg : algorithmsOf(coll))
      for (int p : {1, 2, 3, 4, 6})
        for (int root = 0; root < p; ++root)
          for (int variant = 0; variant < 4; ++variant) {
            const bool inPlace = variant & 1, ordered = variant & 2;
            const auto counts = randomCounts(p, 31u * p + root, root == 1 && p > 3);
            const Layout l = ordered ? inRankOrder(counts) : shuffled(counts, 13u * p + root);
            runTeam(p, [&](Team& team) {
              rootedCall(*alg, team, counts, l, root, inPlace,
                         "p=" + std::to_string(p) + " root " + std::to_string(root) +
                             (inPlace ? " in place" : "") + (ordered ? " in rank order" : ""));
            });
          }
}

// The hierarchical gatherv and scatterv over emulated nodes (equal, round-robin, unequal, nodes
// of one rank), with and without the nodes' shared memory, for every root: irregular counts with
// zeros, blocks larger than a shared-memory buffer, all empty; in place at the root; blocks
// shuffled with gaps and in rank order (the root's node buffers in place in its buffer). Without
// a selector the node steps are the shared memory or the linear algorithms; with one whose rules
// give the node steps to the binomial trees, those run nested in the hierarchical algorithms
// (each level its own scratch slots).
TEST(VectorAlgorithms, HierarchicalGathervAndScattervOverNodesForEveryRoot) {
  std::vector<std::string> errors;
  Environment env = {{"OVERPASS_TUNE",
                      "gather:level=node:@binomial#gatherv:level=node:@binomial"
                      "#scatterv:level=node:@binomial"}};
  const auto trees = Selector::create(parseConfig(env).config, &errors);
  ASSERT_TRUE(trees) << errors.front();
  for (Collective coll : {Collective::kGatherv, Collective::kScatterv}) {
    const Algorithm& alg = *findAlgorithm(coll, "hierarchical");
    for (const test::NodeLayout& layout : test::layoutsOver({{2, 2}, {3, 2}, {2, 3}})) {
      const Topology& topo = layout.topo;
      const int p = topo.size();
      for (int root = 0; root < p; ++root)
        for (int pattern : {0, 1, 2})
          for (int variant = 0; variant < 12; ++variant) {
            const bool inPlace = variant & 1, nodeShm = variant & 2, ordered = variant & 4;
            const bool binomial = variant & 8;
            if (binomial && nodeShm) continue;
            const auto counts = randomCounts(p, 17u * p + 5u * root + 101u * pattern, pattern);
            const Layout l = ordered ? inRankOrder(counts) : shuffled(counts, 29u * p + root);
            const std::string what = layout.name + " root " + std::to_string(root) + " pattern " +
                                     std::to_string(pattern) + (inPlace ? " in place" : "") +
                                     (nodeShm ? " shm" : "") + (ordered ? " in rank order" : "") +
                                     (binomial ? " binomial node steps" : "");
            test::runOverNodes(topo, nodeShm, [&](Team& team) {
              ASSERT_TRUE(overSeveralNodes(team)) << what;
              if (binomial) team.selector = &*trees;
              rootedCall(alg, team, counts, l, root, inPlace, what);
            });
          }
    }
  }
}

// One message per node crosses the network, of exactly the node's blocks (and for scatterv a
// header of the node's sizes before it, none for a node of one rank): over two nodes, every root,
// the bytes and messages each node sends to the other. The linear algorithms send one message
// per rank (checked, so that the check can fail).
TEST(VectorAlgorithms, HierarchicalGathervAndScattervSendOneMessagePerNodeAcross) {
  const Algorithm& gatherv = *findAlgorithm(Collective::kGatherv, "hierarchical");
  const Algorithm& scatterv = *findAlgorithm(Collective::kScatterv, "hierarchical");
  const Algorithm& flat = *findAlgorithm(Collective::kGatherv, "linear");
  for (const test::NodeLayout& layout : {test::NodeLayout{"3+1", test::placed({0, 0, 0, 1})},
                                         test::NodeLayout{"1+2", test::placed({0, 1, 1})},
                                         test::NodeLayout{"3+1 rr", test::placed({0, 1, 0, 0})},
                                         test::NodeLayout{"2+3 rr", test::placed({0, 1, 0, 1, 1})}})
    for (bool nodeShm : {false, true}) {
      const Topology& topo = layout.topo;
      const int p = topo.size();
      std::vector<std::size_t> counts(p);
      for (int q = 0; q < p; ++q) counts[q] = 100 + 37 * q;  // none empty
      const Layout l = shuffled(counts, 7u * p);
      for (int root = 0; root < p; ++root) {
        const int rootNode = topo.nodeOf(root), other = 1 - rootNode;
        std::size_t otherBytes = 0;
        for (int q : topo.nodeRanks(other)) otherBytes += l.bytes[q];
        const std::size_t header =
            topo.nodeSize(other) > 1 ? topo.nodeSize(other) * sizeof(std::uint64_t) : 0;
        struct Across {
          std::size_t bytes[2], messages[2];
        };
        auto across = [&](const Algorithm& alg) {
          std::atomic<std::size_t> bytes[2] = {0, 0}, messages[2] = {0, 0};
          test::runOverNodes(
              topo, nodeShm,
              [&](Team& team) { rootedCall(alg, team, counts, l, root, false, layout.name); },
              bytes, messages);
          return Across{{bytes[0], bytes[1]}, {messages[0], messages[1]}};
        };
        const std::string at =
            layout.name + (nodeShm ? " shm" : "") + " root " + std::to_string(root);
        const Across g = across(gatherv), s = across(scatterv);
        EXPECT_EQ(g.bytes[rootNode], 0u) << "gatherv " << at;
        EXPECT_EQ(g.bytes[other], otherBytes) << "gatherv " << at;
        EXPECT_EQ(g.messages[rootNode], 0u) << "gatherv " << at;
        EXPECT_EQ(g.messages[other], 1u) << "gatherv " << at;
        EXPECT_EQ(s.bytes[rootNode], header + otherBytes) << "scatterv " << at;
        EXPECT_EQ(s.bytes[other], 0u) << "scatterv " << at;
        EXPECT_EQ(s.messages[rootNode], header ? 2u : 1u) << "scatterv " << at;
        EXPECT_EQ(s.messages[other], 0u) << "scatterv " << at;
        const Across f = across(flat);
        EXPECT_EQ(f.bytes[other], otherBytes) << "linear gatherv " << at;
        EXPECT_EQ(f.messages[other], static_cast<std::size_t>(topo.nodeSize(other)))
            << "linear gatherv " << at;
      }
    }
}

// Uneven blocks with zeros (pattern 0), all empty (1), blocks past the 1 KiB buffers of the
// test's channel (2, several rounds at every team size), and blocks of up to 2 elements (3, a
// round of at most 48 bytes beside its stamp up to 4 ranks).
TEST(VectorAlgorithms, ReduceScatterUnevenBlocksInt32SumAndRankOrderBits) {
  for (const Algorithm* alg : algorithmsOf(Collective::kReduceScatter))
    for (int p : {1, 2, 3, 4, 5, 7})
      for (int pattern : {0, 1, 2, 3}) {
        const auto counts = randomCounts(p, 41u * p + pattern, pattern);
        const std::size_t all = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
        std::vector<std::size_t> bytes(p);
        std::vector<std::ptrdiff_t> offset(p);
        std::size_t at = 0;
        for (int q = 0; q < p; ++q) {
          bytes[q] = counts[q] * sizeof(double);
          offset[q] = static_cast<std::ptrdiff_t>(at);
          at += bytes[q];
        }
        // Doubles whose sum depends on the order: rank order's bits must be the left fold's.
        auto input = [](int r, std::size_t i) { return (r % 2 ? 1e16 : 1.0) + r * 0.1 + i; };
        runTeam(p, [&](Team& team) {
          const int r = team.rank();
          std::vector<double> in(all + 1), out(counts[r] + 1, -1.0);
          for (std::size_t i = 0; i < all; ++i) in[i] = input(r, i);
          CollArgs a;
          a.coll = Collective::kReduceScatter;
          a.sendbuf = in.data();
          a.recvbuf = out.data();
          a.count = all;
          a.bytes = all * sizeof(double);
          a.type = DataType::kDouble;
          a.op = ReduceOp::kSum;
          a.recvBlocks = {bytes.data(), offset.data()};
          ASSERT_EQ(alg->run(a, team), Status::kOk) << alg->name;
          const std::size_t first = static_cast<std::size_t>(offset[r]) / sizeof(double);
          for (std::size_t i = 0; i < counts[r]; ++i) {
            double want = input(0, first + i);
            for (int q = 1; q < p; ++q) want += input(q, first + i);
            if (alg->rankOrder)
              EXPECT_EQ(out[i], want) << alg->name << " p=" << p << " rank " << r << " i " << i;
            else
              EXPECT_DOUBLE_EQ(out[i], want) << alg->name << " p=" << p << " rank " << r;
          }
          EXPECT_EQ(out[counts[r]], -1.0) << alg->name << ": wrote past its block";
        });
      }
}

// The hierarchical reduce_scatter (the hierarchical allreduce, each rank keeping its block) over
// emulated nodes, with and without node shared memory: uneven int32 blocks with zeros, all
// empty, and a block past the nodes' 1 KiB buffers; the neighbours of the block untouched.
TEST(VectorAlgorithms, ReduceScatterHierarchicalOverNodes) {
  const Algorithm& alg = *findAlgorithm(Collective::kReduceScatter, "hierarchical");
  for (const test::NodeLayout& layout : test::layoutsOver({{2, 2}, {3, 2}, {2, 3}}))
    for (int pattern : {0, 1, 2})
      for (bool nodeShm : {false, true}) {
        const Topology& topo = layout.topo;
        const int p = topo.size();
        const auto counts = randomCounts(p, 43u * p + pattern, pattern);
        const std::size_t all = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
        std::vector<std::size_t> bytes(p);
        std::vector<std::ptrdiff_t> offset(p);
        std::size_t at = 0;
        for (int q = 0; q < p; ++q) {
          bytes[q] = counts[q] * sizeof(std::int32_t);
          offset[q] = static_cast<std::ptrdiff_t>(at);
          at += bytes[q];
        }
        test::runOverNodes(topo, nodeShm, [&](Team& team) {
          const int r = team.rank();
          std::vector<std::int32_t> in(all + 1), out(counts[r] + 1, -7);
          for (std::size_t i = 0; i < all; ++i) in[i] = value(r, 0, i);
          CollArgs a;
          a.coll = Collective::kReduceScatter;
          a.sendbuf = in.data();
          a.recvbuf = out.data();
          a.count = all;
          a.bytes = all * sizeof(std::int32_t);
          a.type = DataType::kInt32;
          a.op = ReduceOp::kSum;
          a.recvBlocks = {bytes.data(), offset.data()};
          ASSERT_EQ(alg.run(a, team), Status::kOk) << layout.name;
          const std::size_t first = static_cast<std::size_t>(offset[r]) / sizeof(std::int32_t);
          std::vector<std::int32_t> want(counts[r] + 1, -7);
          for (std::size_t i = 0; i < counts[r]; ++i) {
            std::uint32_t sum = 0;  // wraps as the kernels' int32 sum does
            for (int q = 0; q < p; ++q) sum += static_cast<std::uint32_t>(value(q, 0, first + i));
            want[i] = static_cast<std::int32_t>(sum);
          }
          EXPECT_EQ(out, want) << layout.name << (nodeShm ? " shm" : "") << " pattern " << pattern
                               << " rank " << r;
        });
      }
}

// x -> m x + c composed left to right: associative, not commutative.
struct Affine {
  std::int64_t m, c;
};
void compose(const void* in, void* inout, std::size_t count, void*) {
  const auto* a = static_cast<const Affine*>(in);
  auto* b = static_cast<Affine*>(inout);
  for (std::size_t i = 0; i < count; ++i)
    b[i] = {static_cast<std::int64_t>(static_cast<std::uint64_t>(a[i].m) * b[i].m),
            static_cast<std::int64_t>(static_cast<std::uint64_t>(a[i].c) * b[i].m + b[i].c)};
}

// Vectors of 0-5 elements (16 bytes each) and of 17 (272 bytes): the chain's prefixes through
// posts up to 8 ranks, and past one post (and at 9 ranks) through the transport.
TEST(VectorAlgorithms, ScanAndExscanKeepRankOrderOnANonCommutativeOperation) {
  const UserReduce user{compose, nullptr, false, sizeof(Affine)};
  for (Collective coll : {Collective::kScan, Collective::kExscan})
    for (const Algorithm* alg : algorithmsOf(coll))
      for (int p : {1, 2, 3, 4, 5, 7, 8, 9})
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{17}})
          for (bool inPlace : {false, true}) {
            auto x = [](int r, std::size_t i) {
              return Affine{r + 2 + static_cast<std::int64_t>(i), 3 * r - 1};
            };
            runTeam(p, [&](Team& team) {
              const int r = team.rank();
              std::vector<Affine> in(n + 1), out(n + 1, Affine{-7, -7});
              for (std::size_t i = 0; i < n; ++i) in[i] = x(r, i);
              if (inPlace) out = in, out[n] = {-7, -7};
              CollArgs a;
              a.coll = coll;
              a.sendbuf = inPlace ? static_cast<const void*>(out.data()) : in.data();
              a.recvbuf = out.data();
              a.count = n;
              a.bytes = n * sizeof(Affine);
              a.type = DataType::kByte;
              a.op = ReduceOp::kUser;
              a.user = &user;
              ASSERT_EQ(alg->run(a, team), Status::kOk) << alg->name;
              const int last = coll == Collective::kScan ? r : r - 1;
              for (std::size_t i = 0; i < n; ++i) {
                if (last < 0) {  // exscan's rank 0: untouched
                  const Affine before = inPlace ? x(0, i) : Affine{-7, -7};
                  EXPECT_EQ(out[i].m, before.m) << alg->name << " rank 0 written";
                  EXPECT_EQ(out[i].c, before.c) << alg->name << " rank 0 written";
                  continue;
                }
                Affine want = x(0, i);
                for (int q = 1; q <= last; ++q) {
                  Affine next = x(q, i);
                  compose(&want, &next, 1, nullptr);
                  want = next;
                }
                EXPECT_EQ(out[i].m, want.m) << alg->name << " p=" << p << " rank " << r;
                EXPECT_EQ(out[i].c, want.c) << alg->name << " p=" << p << " rank " << r;
              }
              EXPECT_EQ(out[n].m, -7) << alg->name << ": wrote past the vector";
            });
          }
}

}  // namespace
}  // namespace overpass
