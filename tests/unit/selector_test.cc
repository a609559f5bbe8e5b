// The tune grammar (strict parsing, errors naming the token) and the selector (rule priority,
// rules skipped when their algorithm cannot serve a call, the cost model, deterministic mode,
// memoisation).
#include "coll/select/selector.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace overpass {
namespace {

Config configWith(const Environment& env) {
  ParsedConfig parsed = parseConfig(env);
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  return parsed.config;
}

Selector selectorWith(const Environment& env) {
  std::vector<std::string> errors;
  auto s = Selector::create(configWith(env), &errors);
  EXPECT_TRUE(s) << (errors.empty() ? "" : errors.front());
  return s ? *s : Selector();
}

std::string tuneError(std::string_view text) {
  std::string error;
  EXPECT_FALSE(parseTune(text, &error)) << text;
  return error;
}

CallShape shape(Collective coll, std::size_t bytes, int p, std::size_t element = 4) {
  return {coll, bytes, isReduction(coll) ? bytes / element : bytes, p, false};
}

std::string pick(const Selector& s, Collective coll, std::size_t bytes, int p) {
  return std::string(s.select(shape(coll, bytes, p)).algorithm->name);
}

TEST(Tune, ParsesRulesRangesAndTeamSizes) {
  std::string error;
  auto rules = parseTune(
      "allreduce:0-8K:@recursive_doubling # allreduce:8K-inf:np=3-inf:@ring#bcast:@binomial"
      "#barrier:np=2:@pmpi#gather:1m-1G:@linear",
      &error);
  ASSERT_TRUE(rules) << error;
  ASSERT_EQ(rules->size(), 5u);
  const TuneRule& r0 = (*rules)[0];
  EXPECT_EQ(r0.coll, Collective::kAllreduce);
  EXPECT_EQ(r0.minBytes, 0u);
  EXPECT_EQ(r0.maxBytes, 8192u);
  EXPECT_EQ(r0.algorithm->name, "recursive_doubling");
  EXPECT_TRUE(r0.matches(shape(Collective::kAllreduce, 8191, 64)));
  EXPECT_FALSE(r0.matches(shape(Collective::kAllreduce, 8192, 64)));  // half-open
  const TuneRule& r1 = (*rules)[1];
  EXPECT_EQ(r1.minRanks, 3);
  EXPECT_FALSE(r1.matches(shape(Collective::kAllreduce, 1u << 30, 2)));
  EXPECT_TRUE(r1.matches(shape(Collective::kAllreduce, SIZE_MAX - 1, 3)));
  EXPECT_EQ((*rules)[2].maxBytes, SIZE_MAX);
  EXPECT_TRUE((*rules)[3].algorithm->isPmpi());
  EXPECT_TRUE((*rules)[3].matches(shape(Collective::kBarrier, 0, 2)));
  EXPECT_FALSE((*rules)[3].matches(shape(Collective::kBarrier, 0, 3)));
  EXPECT_EQ((*rules)[4].minBytes, 1u << 20);
  EXPECT_EQ((*rules)[4].maxBytes, 1u << 30);
  EXPECT_EQ((*rules)[4].text, "gather:1m-1G:@linear");
  ASSERT_TRUE(parseTune("allreduce:1k-Inf:np=1K:@ring", &error)) << error;  // either case
  EXPECT_EQ((*parseTune("allreduce:1k-Inf:np=1K:@ring", &error))[0].minRanks, 1024);
  auto nodes = parseTune("alltoall:nodes=1:@pmpi#alltoall:nodes=2-inf:np=4:@bruck", &error);
  ASSERT_TRUE(nodes) << error;
  CallShape spread = shape(Collective::kAlltoall, 64, 4);
  EXPECT_TRUE((*nodes)[0].matches(spread));  // one node: CallShape's default
  EXPECT_FALSE((*nodes)[1].matches(spread));
  spread.nodes = 2;
  EXPECT_FALSE((*nodes)[0].matches(spread));
  EXPECT_TRUE((*nodes)[1].matches(spread));
  ASSERT_TRUE(parseTune("  ", &error));
  EXPECT_TRUE(parseTune("", &error)->empty());
}

TEST(Tune, ErrorsNameTheBadToken) {
  EXPECT_EQ(tuneError("allreduce:@ring#allreduc:@ring")
                .rfind("token 2 'allreduc:@ring': "
                       "'allreduc' is not a collective",
                       0),
            0u);
  EXPECT_NE(tuneError("allreduce:level=rack:@ring").find("'level=rack' is not a level"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:level=team:level=nodes:@ring").find("a second level"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:0-8Q:@ring").find("'0-8Q' is neither a size range"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:8K-8K:@ring").find("'8K-8K'"), std::string::npos);
  EXPECT_NE(tuneError("allreduce:@rung")
                .find("'rung' is not an algorithm of allreduce (pmpi, "
                      "recursive_doubling, ring"),
            std::string::npos);
  EXPECT_NE(tuneError("bcast:@ring").find("not an algorithm of bcast"), std::string::npos);
  EXPECT_NE(tuneError("allreduce:0-1K").find("no @algorithm"), std::string::npos);
  EXPECT_NE(tuneError("allreduce:@ring:@ring").find("'@ring': a second algorithm"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:0-1K:1K-2K:@ring").find("'1K-2K': a second size range"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:np=2:np=3:@ring").find("'np=3': a second team size"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:np=0-4:@ring").find("'np=0-4': team sizes are 1 to"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:np=2000000000:@ring").find("team sizes are 1 to"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:np=inf:@ring").find("is not a team size"), std::string::npos);
  EXPECT_NE(tuneError("barrier:1-inf:@pmpi").find("barrier has no size"), std::string::npos);
  EXPECT_NE(tuneError("allreduce:np=x:@ring").find("'np=x' is not a team size"), std::string::npos);
  EXPECT_NE(tuneError("allreduce:nodes=0:@ring").find("'nodes=0': node counts are 1 to"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:nodes=2:nodes=3:@ring").find("a second node count"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:nodes=a-b:@ring")
                .find("'nodes=a-b' is not a node count: nodes=N or nodes=LO-HI"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:@ring##bcast:@binomial").find("token 2 '': empty rule"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:99999999999999999999K-inf:@ring").find("neither a size"),
            std::string::npos);
}

TEST(Tune, FormatsSizesAsTheGrammarWritesThem) {
  EXPECT_EQ(formatSize(0), "0");
  EXPECT_EQ(formatSize(1000), "1000");
  EXPECT_EQ(formatSize(8192), "8K");
  EXPECT_EQ(formatSize(3u << 20), "3M");
  EXPECT_EQ(formatSize(std::size_t{1} << 30), "1G");
  EXPECT_EQ(formatSize(SIZE_MAX), "inf");
}

// The built-in rules hand a call to the MPI library only where it was measured faster, or where
// no algorithm of Overpass's was faster (on one node): gather and scatter of blocks below 1 KiB
// at 2-4 ranks (below the MPI library's inline send; the posts' races and rules aside, which this
// table does not reach); at 2 ranks bcast of 128-512 KiB, alltoall from 8 KiB blocks and
// allgather from 16 KiB blocks (from 8 MiB shm, where a node channel serves); at 3-4 tiny bcast
// and alltoall from 128 KiB blocks; alltoallv, gatherv and scatterv at 2-4 (no size every rank
// knows, and no algorithm of Overpass's matched the MPI library at every size); allgatherv at 2.
// Never a reduction: deterministic mode must keep its rank-order algorithms, and Open MPI gets
// MIN/MAX of MPI_OFFSET wrong. And every call on a communicator of one rank (a generated rule:
// nothing to communicate, the MPI library's copy is the least work), but reduce_scatter_block
// (Overpass's was measured faster there).
bool measuredPmpi(Collective coll, std::size_t bytes, int p) {
  using enum Collective;
  if (p == 1) return coll != kReduceScatterBlock;
  if (p < 2 || p >= 5) return false;
  constexpr std::size_t kK = 1024;
  switch (coll) {
    case kBcast:
      return p == 2 ? bytes >= 128 * kK && bytes < 512 * kK : bytes < 512;
    case kGather:
    case kScatter:
      return bytes < kK;
    case kAlltoall:
      return bytes >= (p == 2 ? 8 : 128) * kK;
    case kAllgather:
      return p == 2 && bytes >= 16 * kK;  // (from 8 MiB shm, where a node channel serves)
    case kAlltoallv:
    case kGatherv:
    case kScatterv:
      return true;
    case kAllgatherv:
      return p == 2;
    default:
      return false;
  }
}

TEST(Selector, BuiltInRulesParseAndServeEveryCallWithOverpassButWhereMeasured) {
  std::string error;
  ASSERT_TRUE(parseTune(kDefaultTune, &error)) << error;
  const Selector s = selectorWith({});
  for (std::size_t c = 0; c < kNumCollectives; ++c)
    for (std::size_t bytes : {0ul, 1ul, 8ul, 4096ul, 65536ul, 1ul << 20, 1ul << 26})
      for (int p : {1, 2, 3, 4, 5, 8, 13, 16}) {
        const auto coll = static_cast<Collective>(c);
        CallShape call = shape(coll, bytes, p);
        const Selection sel = s.select(call);
        EXPECT_EQ(sel.algorithm->coll, coll);
        EXPECT_EQ(sel.algorithm->isPmpi(), measuredPmpi(coll, bytes, p))
            << collectiveName(coll) << " " << bytes << " B on " << p;
        EXPECT_TRUE(sel.algorithm->canServe(call));
      }
}

TEST(Selector, CostModelPrefersLatencyOptimalSmallAndBandwidthOptimalLarge) {
  const Selector s = selectorWith({});  // 16 ranks: no built-in rule, the model decides
  EXPECT_EQ(s.select(shape(Collective::kAllreduce, 8, 16)).rule, nullptr);
  EXPECT_EQ(pick(s, Collective::kAllreduce, 8, 16), "recursive_doubling");
  EXPECT_EQ(pick(s, Collective::kAllreduce, 64u << 20, 16), "rabenseifner");
  EXPECT_EQ(pick(s, Collective::kAllgather, 64u << 20, 13), "bruck");
  EXPECT_EQ(pick(s, Collective::kGather, 8, 16), "binomial");
  EXPECT_EQ(pick(s, Collective::kGather, 1u << 20, 16), "linear");
}

TEST(Selector, BuiltInRulesRecordTheMeasuredChoices) {
  const Selector s = selectorWith({});
  EXPECT_EQ(pick(s, Collective::kAllreduce, 8, 2), "recursive_doubling");
  EXPECT_EQ(pick(s, Collective::kAllreduce, 4u << 20, 2), "ring");
  EXPECT_EQ(pick(s, Collective::kAllreduce, 2048, 4), "knomial");
  EXPECT_EQ(pick(s, Collective::kAllreduce, 512u << 10, 3), "ring");
  EXPECT_EQ(pick(s, Collective::kBcast, 8u << 20, 4), "binomial");
  EXPECT_EQ(pick(s, Collective::kScatter, 1u << 20, 4), "linear");
  EXPECT_EQ(pick(s, Collective::kBcast, 8, 4), "pmpi");
  auto oneNode = [](Collective coll, std::size_t bytes, int p) {
    CallShape call = shape(coll, bytes, p);
    call.shmBuffer = 128 << 10;
    return call;
  };
  auto onOneNode = [&](Collective coll, std::size_t bytes, int p) {
    return std::string(s.select(oneNode(coll, bytes, p)).algorithm->name);
  };
  EXPECT_EQ(onOneNode(Collective::kAlltoall, 512, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kReduce, 4096, 3), "shm");
  EXPECT_EQ(onOneNode(Collective::kReduce, 64 << 10, 3), "shm");
  EXPECT_EQ(onOneNode(Collective::kReduce, 512 << 10, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kReduce, 1 << 20, 4), "cma");
  EXPECT_EQ(onOneNode(Collective::kReduce, 8 << 20, 3), "cma");
  EXPECT_EQ(onOneNode(Collective::kAllreduce, 256 << 10, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kAllreduce, 512 << 10, 3), "cma");  // since 2026-12-06
  EXPECT_EQ(onOneNode(Collective::kAllreduce, 16 << 20, 4), "cma");
  EXPECT_NE(onOneNode(Collective::kAllreduce, 16 << 20, 5), "cma");  // np 5 not measured
  // Since the shared-memory payloads sit on whole cache lines (docs/PERFORMANCE.md).
  EXPECT_EQ(onOneNode(Collective::kAllreduce, 64 << 10, 2), "shm");
  // Since the cma allreduce's reduced blocks go through the node's shared memory (2026-12-06);
  // across nodes (no channel) the rules before it.
  EXPECT_EQ(onOneNode(Collective::kAllreduce, 128 << 10, 2), "cma");
  EXPECT_EQ(onOneNode(Collective::kAllreduce, 16 << 20, 2), "cma");
  EXPECT_EQ(pick(s, Collective::kAllreduce, 256u << 10, 2), "recursive_doubling");
  // The np 2 bcast of 128-512 KiB races shm and the MPI library (2026-12-07).
  for (std::size_t bytes : {std::size_t{128} << 10, std::size_t{256} << 10}) {
    const Selection raced = s.select(oneNode(Collective::kBcast, bytes, 2));
    EXPECT_EQ(raced.algorithm->name, "shm") << bytes;
    ASSERT_NE(raced.rival, nullptr) << bytes;
    EXPECT_EQ(raced.rival->name, "pmpi") << bytes;
  }
  EXPECT_EQ(s.select(oneNode(Collective::kBcast, 64 << 10, 2)).rival, nullptr);
  EXPECT_EQ(s.select(oneNode(Collective::kBcast, 512 << 10, 2)).rival, nullptr);
  EXPECT_EQ(pick(s, Collective::kBcast, 256 << 10, 2), "pmpi");  // no channel: the rule beneath
  EXPECT_EQ(onOneNode(Collective::kBcast, 4 << 20, 2), "shm");
  EXPECT_EQ(onOneNode(Collective::kBcast, 4 << 20, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kGather, 16 << 20, 2), "shm");
  EXPECT_EQ(onOneNode(Collective::kGather, 1 << 20, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kGather, 4 << 20, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kAlltoall, 64 << 10, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kAlltoall, 256 << 10, 4), "pmpi");
  EXPECT_EQ(onOneNode(Collective::kReduceScatterBlock, 32 << 10, 2), "shm");
  // The np 2 reduce on one node: shm, with no race against the binomial tree (2026-12-06).
  const Selection served = s.select(oneNode(Collective::kReduce, 256 << 10, 2));
  EXPECT_EQ(served.algorithm->name, "shm");
  EXPECT_EQ(served.rival, nullptr);
  // The np 2 alltoall on one node races shm and the MPI library from 4 KiB blocks at every size,
  // the allgather up to 8 MiB blocks (2026-12-07), shm above.
  for (std::size_t blocks : {std::size_t{64} << 10, std::size_t{4} << 20, std::size_t{32} << 20}) {
    for (Collective coll : {Collective::kAlltoall, Collective::kAllgather}) {
      const Selection raced = s.select(oneNode(coll, blocks, 2));
      EXPECT_EQ(raced.algorithm->name, "shm") << collectiveName(coll) << " " << blocks;
      const bool races = coll == Collective::kAlltoall || blocks < (std::size_t{8} << 20);
      ASSERT_EQ(raced.rival != nullptr, races) << collectiveName(coll) << " " << blocks;
      if (races) {
        EXPECT_EQ(raced.rival->name, "pmpi");
      }
    }
  }
  // Since the own block stays out of the round: the np 2 reduce_scatter_block through shm at
  // every size, the scatter up to 512 KiB blocks.
  EXPECT_EQ(onOneNode(Collective::kReduceScatterBlock, 1 << 20, 2), "shm");
  EXPECT_EQ(onOneNode(Collective::kScatter, 256 << 10, 2), "shm");
  EXPECT_EQ(onOneNode(Collective::kScatter, 1 << 20, 2), "linear");
  // Since the shm reduce_scatter works on a piece of every block per round (2026-12-06): at np 2
  // too, without a channel (two nodes) the ring; the np 2 scan through shm from 257 B, the
  // exscan at 257 B-32 KiB, the chain (through posts) up to 256 B (np 3-4: shm from 512 B).
  EXPECT_EQ(onOneNode(Collective::kReduceScatter, 8, 2), "shm");
  EXPECT_EQ(onOneNode(Collective::kReduceScatter, 4 << 20, 2), "shm");
  EXPECT_EQ(pick(s, Collective::kReduceScatter, 4 << 20, 2), "ring");
  for (Collective coll : {Collective::kScan, Collective::kExscan}) {
    EXPECT_EQ(onOneNode(coll, 64, 2), "linear");
    EXPECT_EQ(onOneNode(coll, 256, 2), "linear");
    EXPECT_EQ(onOneNode(coll, 257, 2), "shm");
    EXPECT_EQ(onOneNode(coll, 16 << 10, 2), "shm");
    EXPECT_EQ(onOneNode(coll, 256, 4), "linear");
    EXPECT_EQ(onOneNode(coll, 512, 4), "shm");
  }
  EXPECT_EQ(onOneNode(Collective::kScan, 4 << 20, 2), "shm");
  EXPECT_EQ(onOneNode(Collective::kExscan, 64 << 10, 2), "linear");
  // Tiny bcast, gather and scatter, while the MPI library's messages go inline (up to 256 B: the
  // message of a bcast; one block of a gather or scatter at np 2-3, two through its trees at np
  // 4): at np 2 gather and scatter race the post algorithms and the MPI library, at np 4 posts
  // serve but the gather and scatter of 4-byte blocks, np 3 stays with the MPI library; shm
  // above.
  auto racing = [&](Collective coll, std::size_t bytes, int p) {
    const Selection sel = s.select(oneNode(coll, bytes, p));
    return std::string(sel.algorithm->name) + "|" +
           (sel.rival ? std::string(sel.rival->name) : std::string("-"));
  };
  for (Collective coll : {Collective::kGather, Collective::kScatter}) {
    EXPECT_EQ(racing(coll, 8, 2), "post|pmpi");
    EXPECT_EQ(racing(coll, 256, 2), "post|pmpi");
    EXPECT_EQ(onOneNode(coll, 260, 2), "shm");
    EXPECT_EQ(onOneNode(coll, 256, 3), "pmpi");
    EXPECT_EQ(onOneNode(coll, 512, 3), "shm");
    EXPECT_EQ(onOneNode(coll, 4, 4), "pmpi");
    EXPECT_EQ(racing(coll, 16, 4), "post|-");
    EXPECT_EQ(racing(coll, 128, 4), "post|-");
    EXPECT_EQ(onOneNode(coll, 192, 4), "shm");
    EXPECT_EQ(onOneNode(coll, 1024, 4), "shm");
    EXPECT_EQ(pick(s, coll, 512, 4), "pmpi");  // not on one node: as before
    EXPECT_EQ(pick(s, coll, 64, 4), "pmpi");
  }
  EXPECT_EQ(onOneNode(Collective::kBcast, 8, 4), "post");
  EXPECT_EQ(onOneNode(Collective::kBcast, 256, 4), "post");
  EXPECT_EQ(onOneNode(Collective::kBcast, 256, 3), "pmpi");
  EXPECT_EQ(onOneNode(Collective::kBcast, 320, 3), "shm");
  EXPECT_EQ(onOneNode(Collective::kBcast, 320, 4), "shm");
  EXPECT_EQ(onOneNode(Collective::kBcast, 64, 2), "shm");
  EXPECT_EQ(pick(s, Collective::kBcast, 320, 4), "pmpi");
  // A team of more ranks than have post boxes (ShmArena::kPostRanks): the rules go on to the
  // MPI library (no built-in rule names posts there; forced, posts decline).
  EXPECT_FALSE(
      findAlgorithm(Collective::kGather, "post")->serves(oneNode(Collective::kGather, 8, 9)));
  // Without a node's shared memory (cma cannot serve), the rules before it.
  EXPECT_EQ(pick(s, Collective::kReduce, 8u << 20, 3), "binomial");
}

// The built-in rules take the hierarchical algorithms over several nodes whether or not the
// nodes hold as many ranks (2+1+1, 3+1: the shape carries the most ranks on one node), but not
// where every node holds one rank (nothing to do inside a node) or a reduction has fewer
// elements than the largest node has ranks.
TEST(Selector, HierarchicalServesUnequalNodes) {
  const Selector s = selectorWith({});
  auto over = [&](Collective coll, std::size_t bytes, int p, int nodes, int maxPerNode) {
    CallShape call = shape(coll, bytes, p);
    call.nodes = nodes;
    call.maxPerNode = maxPerNode;
    return std::string(s.select(call).algorithm->name);
  };
  for (auto [p, nodes, most] : {std::tuple{4, 3, 2}, {4, 2, 3}, {3, 2, 2}, {4, 2, 2}}) {
    EXPECT_EQ(over(Collective::kAllreduce, 1 << 20, p, nodes, most), "hierarchical");
    EXPECT_EQ(over(Collective::kBcast, 1 << 20, p, nodes, most), "hierarchical");
    EXPECT_EQ(over(Collective::kReduce, 1 << 20, p, nodes, most), "hierarchical");
    EXPECT_EQ(over(Collective::kGather, 16 << 10, p, nodes, most), "hierarchical");
    EXPECT_EQ(over(Collective::kScatter, 16 << 10, p, nodes, most), "hierarchical");
  }
  EXPECT_NE(over(Collective::kAllreduce, 1 << 20, 4, 4, 1), "hierarchical");
  EXPECT_NE(over(Collective::kBcast, 1 << 20, 4, 1, 4), "hierarchical");
  const Algorithm& hierarchical = *findAlgorithm(Collective::kAllreduce, "hierarchical");
  CallShape few = shape(Collective::kAllreduce, 8, 4);  // 2 elements, a node of 3 ranks
  few.nodes = 2;
  few.maxPerNode = 3;
  EXPECT_TRUE(hierarchical.canServe(few)) << "fewer elements than ranks per node: served";
  few.count = 0;
  EXPECT_FALSE(hierarchical.canServe(few));
}

// Across real hosts (docs/PERFORMANCE.md, "Across hosts") the hierarchical allreduce and bcast
// won at every size, the hierarchical reduce from 4 KiB: one crossing of the link instead of two.
TEST(Selector, HierarchicalSizesMeasuredAcrossHosts) {
  const Selector s = selectorWith({});
  auto over = [&](Collective coll, std::size_t bytes) {
    CallShape call = shape(coll, bytes, 4);
    call.nodes = 2;
    call.maxPerNode = 2;
    return std::string(s.select(call).algorithm->name);
  };
  EXPECT_EQ(over(Collective::kAllreduce, 8), "hierarchical");
  EXPECT_EQ(over(Collective::kAllreduce, 4), "hierarchical") << "one float: crosses once too";
  EXPECT_EQ(over(Collective::kAllreduce, 8 << 10), "hierarchical");
  EXPECT_EQ(over(Collective::kBcast, 4), "hierarchical");
  EXPECT_EQ(over(Collective::kBcast, 1 << 10), "hierarchical");
  EXPECT_EQ(over(Collective::kReduce, 1 << 10), "binomial");
  EXPECT_EQ(over(Collective::kReduce, 4 << 10), "hierarchical");
}

TEST(Selector, LaterRulesWinAndForcedVariablesWinOverTune) {
  const Selector s =
      selectorWith({{"OVERPASS_TUNE", "allreduce:@ring#allreduce:0-1K:@recursive_doubling"},
                    {"OVERPASS_BCAST", "binomial"}});
  EXPECT_EQ(pick(s, Collective::kAllreduce, 512, 4), "recursive_doubling");
  EXPECT_EQ(pick(s, Collective::kAllreduce, 4096, 4), "ring");
  EXPECT_EQ(s.select(shape(Collective::kAllreduce, 4096, 4)).rule->text, "allreduce:@ring");
  EXPECT_EQ(pick(s, Collective::kBcast, 1u << 26, 4), "binomial");
  const Selector forced = selectorWith(
      {{"OVERPASS_TUNE", "allreduce:@ring"}, {"OVERPASS_ALLREDUCE", "recursive_doubling"}});
  EXPECT_EQ(pick(forced, Collective::kAllreduce, 1u << 26, 4), "recursive_doubling");
  const Selector pmpi = selectorWith({{"OVERPASS_ALLREDUCE", "pmpi"}});
  EXPECT_TRUE(pmpi.select(shape(Collective::kAllreduce, 8, 4)).algorithm->isPmpi());
}

TEST(Selector, ARuleWhoseAlgorithmCannotServeTheCallIsSkippedAndReported) {
  const Selector s = selectorWith({{"OVERPASS_ALLREDUCE", "ring"}});
  const Selection one = s.select(shape(Collective::kAllreduce, 4, 4));  // 1 element, 4 ranks
  EXPECT_NE(one.algorithm->name, "ring");
  ASSERT_NE(one.skipped, nullptr);
  EXPECT_EQ(one.skipped->text, "allreduce:@ring");
  const Selection many = s.select(shape(Collective::kAllreduce, 4096, 4));
  EXPECT_EQ(many.algorithm->name, "ring");
  EXPECT_EQ(many.skipped, nullptr);
}

TEST(Selector, DeterministicModeUsesOnlyRankOrderAlgorithmsForOrderedCalls) {
  const Selector s = selectorWith({{"OVERPASS_ALLREDUCE", "ring"}});
  for (Collective coll :
       {Collective::kAllreduce, Collective::kReduce, Collective::kReduceScatterBlock})
    for (std::size_t bytes : {0ul, 8ul, 4096ul, 1ul << 24})
      for (int p : {1, 2, 3, 4, 7}) {
        CallShape call = shape(coll, bytes, p, 8);
        call.ordered = true;
        const Algorithm& chosen = *s.select(call).algorithm;  // one rank: nothing to order
        EXPECT_TRUE(chosen.rankOrder || (p == 1 && chosen.isPmpi()))
            << collectiveName(coll) << " " << bytes << " " << p;
      }
}

TEST(Selector, InvalidVariablesAreReportedByName) {
  std::vector<std::string> errors;
  Config config = configWith(
      {{"OVERPASS_TUNE", "allreduce:@ring#bcast:0-x:@binomial"}, {"OVERPASS_GATHER", "binomal"}});
  EXPECT_FALSE(Selector::create(config, &errors));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].rfind("invalid OVERPASS_TUNE: token 2 'bcast:0-x:@binomial'", 0), 0u);
  EXPECT_EQ(errors[1].rfind("invalid OVERPASS_GATHER: 'binomal' is not an algorithm of gather", 0),
            0u);
}

TEST(Selector, PmpiServesEveryCallEvenInDeterministicMode) {
  const Selector s = selectorWith({{"OVERPASS_ALLREDUCE", "pmpi"}});
  CallShape call = shape(Collective::kAllreduce, 4096, 4, 8);
  call.ordered = true;
  EXPECT_TRUE(s.select(call).algorithm->isPmpi());
}

// A communicator of one rank goes to the MPI library by a generated rule above the built-in ones,
// for whole calls only (reduce_scatter_block excepted: Overpass's was faster there); the user's
// rules and variables still come first.
TEST(Selector, ACommunicatorOfOneRankGoesToTheMpiLibrary) {
  const Selector defaults = selectorWith({});
  for (std::size_t c = 0; c < kNumCollectives; ++c) {
    if (static_cast<Collective>(c) == Collective::kReduceScatterBlock) continue;
    const Selection sel = defaults.select(shape(static_cast<Collective>(c), 8, 1));
    EXPECT_TRUE(sel.algorithm->isPmpi()) << collectiveName(static_cast<Collective>(c));
    ASSERT_NE(sel.rule, nullptr);
    EXPECT_NE(sel.rule->text.find(":np=1:level=team:@pmpi"), std::string::npos) << sel.rule->text;
  }
  EXPECT_EQ(pick(selectorWith({{"OVERPASS_BCAST", "binomial"}}), Collective::kBcast, 8, 1),
            "binomial");
  EXPECT_EQ(
      pick(selectorWith({{"OVERPASS_TUNE", "scatter:np=1:@linear"}}), Collective::kScatter, 8, 1),
      "linear");
  CallShape step = shape(Collective::kAllreduce, 8, 1);
  step.acrossNodes = true;  // a hierarchical algorithm's step between nodes of one rank each
  step.nodes = 1;
  EXPECT_FALSE(defaults.select(step).algorithm->isPmpi());
  EXPECT_NE(pick(defaults, Collective::kReduceScatterBlock, 8, 1), "pmpi");
  EXPECT_NE(generatedTune(configWith({})).find("barrier:np=1:level=team:@pmpi"), std::string::npos);
}

TEST(Selector, RankOrderRootIsBoundedToKeepRankZerosScratchSmall) {
  const Selector s = selectorWith({{"OVERPASS_ALLREDUCE", "rank_order_root"}});
  EXPECT_EQ(pick(s, Collective::kAllreduce, 4096, 4), "rank_order_root");
  EXPECT_NE(pick(s, Collective::kAllreduce, std::size_t{1} << 30, 4), "rank_order_root");
}

TEST(CostModel, ParsesUnitsKeepsUnnamedDefaultsAndRejectsMalformedValues) {
  const Config defaults = configWith({});
  EXPECT_DOUBLE_EQ(defaults.costLatency, 2e-6);
  EXPECT_DOUBLE_EQ(defaults.costBandwidth, 6e9);
  EXPECT_DOUBLE_EQ(defaults.costReduceBandwidth, 8e9);
  const Config c = configWith({{"OVERPASS_COST_MODEL", "latency=1.5us, bandwidth=500MB/s"}});
  EXPECT_DOUBLE_EQ(c.costLatency, 1.5e-6);
  EXPECT_DOUBLE_EQ(c.costBandwidth, 5e8);
  EXPECT_DOUBLE_EQ(c.costReduceBandwidth, 8e9);
  for (const char* bad : {"latency=2", "latency=-1us", "speed=1GB/s", "latency=1us,",
                          "latency=1us,latency=2us", "bandwidth=1,5GB/s", "latency"}) {
    const ParsedConfig parsed = parseConfig({{"OVERPASS_COST_MODEL", bad}});
    EXPECT_EQ(parsed.errors.size(), 1u) << bad;
  }
}

TEST(SelectionCache, RemembersPerShapeAndTellsShapesApart) {
  SelectionCache cache;
  int calls = 0;
  const Algorithm& ring = *findAlgorithm(Collective::kAllreduce, "ring");
  const Algorithm& rd = *findAlgorithm(Collective::kAllreduce, "recursive_doubling");
  auto select = [&](const CallShape& c, std::span<const Algorithm* const>) {
    ++calls;
    return Selection{.algorithm = c.bytes > 100 ? &ring : &rd,
                     .rival = c.bytes > 100 ? &rd : nullptr};
  };
  CallShape a = shape(Collective::kAllreduce, 4096, 4), b = shape(Collective::kAllreduce, 8, 4);
  EXPECT_EQ(cache.get(a, select).algorithm, &ring);
  EXPECT_EQ(cache.get(a, select).rival, &rd);  // a race's rival is memoised with it
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.get(b, select).algorithm, &rd);
  EXPECT_EQ(cache.get(b, select).rival, nullptr);
  EXPECT_EQ(calls, 2);
  a.count = 512;  // same bytes, another element size
  cache.get(a, select);
  a.ordered = true;
  cache.get(a, select);
  EXPECT_EQ(calls, 4);
  a.mem = CallMemory::kDevice;  // a chunk of the staging pipeline is a host call of its own
  cache.get(a, select);
  EXPECT_EQ(calls, 5);
  a.cores = CoreDistance::kFar;  // the two ranks read their cores anew
  cache.get(a, select);
  EXPECT_EQ(calls, 6);
}

// cores= rules match only calls whose two ranks read their cores that way (shm/core_distance.h);
// a call never read (other teams) matches neither.
TEST(Selector, RulesByTheCoresDistance) {
  std::string error;
  auto rules = parseTune("allgather:cores=near:@ring#allgather:cores=far:@bruck", &error);
  ASSERT_TRUE(rules) << error;
  CallShape c = shape(Collective::kAllgather, 8192, 2);
  EXPECT_FALSE((*rules)[0].matches(c));
  EXPECT_FALSE((*rules)[1].matches(c));
  c.cores = CoreDistance::kNear;
  EXPECT_TRUE((*rules)[0].matches(c));
  EXPECT_FALSE((*rules)[1].matches(c));
  c.cores = CoreDistance::kFar;
  EXPECT_FALSE((*rules)[0].matches(c));
  EXPECT_TRUE((*rules)[1].matches(c));
  EXPECT_FALSE(parseTune("allgather:cores=close:@ring", &error));
  EXPECT_NE(error.find("cores=near or cores=far"), std::string::npos) << error;
  EXPECT_FALSE(parseTune("allgather:cores=near:cores=far:@ring", &error));
  EXPECT_NE(error.find("a second core distance"), std::string::npos) << error;

  // In OVERPASS_TUNE, after the built-in rules: np 2 allgather of 8 KiB blocks.
  const Selector selector =
      selectorWith({{"OVERPASS_TUNE", "allgather:8K-16K:np=2:cores=far:@pmpi"}});
  CallShape g = shape(Collective::kAllgather, 8192, 2);
  g.shmBuffer = 128 << 10;
  g.maxPerNode = 2;
  for (CoreDistance d : {CoreDistance::kUnread, CoreDistance::kNear, CoreDistance::kFar}) {
    g.cores = d;
    EXPECT_EQ(selector.select(g).algorithm->name, d == CoreDistance::kFar ? "pmpi" : "shm")
        << coreDistanceName(d);
  }
}

// Races: '@a|b' names two host algorithms (or pmpi); the selector returns both where both serve,
// only the first where the second cannot, and in deterministic mode only between algorithms that
// combine in rank order.
TEST(Selector, RacesNameTwoAlgorithms) {
  std::string error;
  auto rules = parseTune("allgather:4K-32K:np=2:@shm|pmpi", &error);
  ASSERT_TRUE(rules) << error;
  EXPECT_EQ((*rules)[0].algorithm->name, "shm");
  EXPECT_EQ((*rules)[0].rival->name, "pmpi");
  EXPECT_EQ((*parseTune("allgather:@ring", &error))[0].rival, nullptr);
  EXPECT_NE(tuneError("allgather:@shm|ring|pmpi").find("a race names two algorithms"),
            std::string::npos);
  EXPECT_NE(tuneError("allgather:@shm|shm").find("with itself"), std::string::npos);
  EXPECT_NE(tuneError("allgather:@shm|rings").find("'rings' is not an algorithm"),
            std::string::npos);
  EXPECT_NE(tuneError("allreduce:@ring|device_ipc").find("cannot race"), std::string::npos);

  const Selector selector =
      selectorWith({{"OVERPASS_TUNE", "reduce:@shm|cma#allgather:@ring|shm"}});
  CallShape r = shape(Collective::kReduce, 256 << 10, 4);
  r.shmBuffer = 128 << 10;
  r.maxPerNode = 4;
  Selection s = selector.select(r);
  EXPECT_EQ(s.algorithm->name, "shm");
  ASSERT_NE(s.rival, nullptr);
  EXPECT_EQ(s.rival->name, "cma");
  r.ordered = true;  // deterministic mode: shm and cma both combine in rank order
  EXPECT_NE(selector.select(r).rival, nullptr);
  const Selector toPmpi = selectorWith({{"OVERPASS_TUNE", "reduce:@shm|pmpi"}});
  EXPECT_EQ(toPmpi.select(r).rival, nullptr);  // the MPI library's order is not rank order
  r.ordered = false;
  EXPECT_EQ(toPmpi.select(r).rival->name, "pmpi");
  CallShape g = shape(Collective::kAllgather, 4096, 4);  // no channel: shm cannot serve
  s = selector.select(g);
  EXPECT_EQ(s.algorithm->name, "ring");
  EXPECT_EQ(s.rival, nullptr);
}

// A device algorithm that declined a shape (alike on every rank) is passed over for it, then
// offered again after kRetryAfter calls: every rank's memo holds the same.
TEST(SelectionCache, PassesOverADeclinedAlgorithmThenOffersItAgain) {
  Config config;
  config.gpuChunk = 1 << 20;
  std::vector<std::string> errors;
  const auto selector = Selector::create(config, &errors);
  ASSERT_TRUE(selector) << errors.front();
  auto select = [&](const CallShape& c, std::span<const Algorithm* const> excluded) {
    return selector->select(c, excluded);
  };
  CallShape s = shape(Collective::kAllreduce, 8 << 20, 4);
  s.mem = CallMemory::kDevice;
  s.splittable = true;
  s.shmBuffer = 1 << 20;
  SelectionCache cache;
  const SelectionCache::Choice first = cache.get(s, select);
  const Algorithm& ipc = *first.algorithm;
  EXPECT_EQ(ipc.name, kDeviceIpcName);
  EXPECT_FALSE(first.afterDeclines);
  const Algorithm& pipeline = *cache.decline(s, ipc, select).algorithm;
  EXPECT_EQ(pipeline.name, kStagedPipelineName);
  const SelectionCache::Choice last = cache.decline(s, pipeline, select);
  const Algorithm& host = *last.algorithm;
  EXPECT_EQ(host.kind, AlgorithmKind::kHost);
  EXPECT_TRUE(last.afterDeclines);  // never remembered as a repeated call (shim/dispatch.cc)
  for (std::uint32_t i = 1; i < SelectionCache::kRetryAfter; ++i) {
    const SelectionCache::Choice again = cache.get(s, select);
    EXPECT_EQ(again.algorithm, &host);
    EXPECT_TRUE(again.afterDeclines);
  }
  const SelectionCache::Choice retried = cache.get(s, select);
  EXPECT_EQ(retried.algorithm, &ipc);
  EXPECT_FALSE(retried.afterDeclines);
}

// mem=device rules: the device algorithms serve only where the communicator may carry device
// buffers; host calls on the same team keep the host rules. OVERPASS_GPU_IPC=0 and
// OVERPASS_GPU_CHUNK=0 remove their rules.
TEST(Selector, DeviceAlgorithmsAreChosenByMemoryKind) {
  std::string error;
  auto rules = parseTune("allreduce:mem=device:@ring#bcast:mem=host:@binomial", &error);
  ASSERT_TRUE(rules) << error;
  CallShape c = shape(Collective::kAllreduce, 4096, 4);
  EXPECT_FALSE((*rules)[0].matches(c));
  c.mem = CallMemory::kDevice;
  EXPECT_TRUE((*rules)[0].matches(c));
  EXPECT_FALSE(parseTune("allreduce:mem=gpu:@ring", &error));
  EXPECT_NE(error.find("mem=host or mem=device"), std::string::npos) << error;
  EXPECT_FALSE(parseTune("allreduce:mem=host:mem=device:@ring", &error));

  Config config;
  config.gpuChunk = 1 << 20;
  std::vector<std::string> errors;
  auto selector = Selector::create(config, &errors);
  ASSERT_TRUE(selector);
  CallShape big = shape(Collective::kAllreduce, 4 << 20, 4);
  big.splittable = true;
  big.nodes = 2;  // not one node: no IPC
  big.maxPerNode = 2;
  EXPECT_EQ(selector->select(big).algorithm->kind, AlgorithmKind::kHost);
  big.mem = CallMemory::kDevice;
  EXPECT_EQ(selector->select(big).algorithm->name, kStagedPipelineName);
  big.bytes = big.count = (2 << 20) - 4;  // below two chunks
  EXPECT_EQ(selector->select(big).algorithm->kind, AlgorithmKind::kHost);
  big.bytes = 4 << 20;
  big.nodes = 1;
  big.shmBuffer = 1 << 20;
  EXPECT_EQ(selector->select(big).algorithm->name, kDeviceIpcName);
  // Below the sizes where IPC overtook staging on a GPU: the host algorithm (staged); bcast from
  // the first byte.
  CallShape small = big;
  small.bytes = small.count = (64 << 10) - 4;
  EXPECT_EQ(selector->select(small).algorithm->kind, AlgorithmKind::kHost);
  small.bytes = small.count = 64 << 10;
  EXPECT_EQ(selector->select(small).algorithm->name, kDeviceIpcName);
  small.coll = Collective::kAlltoall;
  small.bytes = small.count = (16 << 10) - 1;
  EXPECT_EQ(selector->select(small).algorithm->kind, AlgorithmKind::kHost);
  small.bytes = small.count = 16 << 10;
  EXPECT_EQ(selector->select(small).algorithm->name, kDeviceIpcName);
  small.coll = Collective::kBcast;
  small.bytes = small.count = 1;
  EXPECT_EQ(selector->select(small).algorithm->name, kDeviceIpcName);
  // One rank: the device rules before the one-rank rules (device buffers through the pipeline,
  // the rest to the MPI library).
  CallShape alone = shape(Collective::kAllreduce, 4 << 20, 1);
  alone.splittable = true;
  alone.mem = CallMemory::kDevice;
  EXPECT_EQ(selector->select(alone).algorithm->name, kStagedPipelineName);
  alone.bytes = alone.count = 4096;
  EXPECT_TRUE(selector->select(alone).algorithm->isPmpi());
  config.gpuIpc = false;
  config.gpuChunk = 0;
  selector = Selector::create(config, &errors);
  ASSERT_TRUE(selector);
  EXPECT_EQ(selector->select(big).algorithm->kind, AlgorithmKind::kHost);
}

}  // namespace
}  // namespace overpass

namespace overpass {
namespace {

// The steps of hierarchical algorithms are calls of their own on one rank per node: rules keyed
// by np decide them; the MPI library (which cannot run on a sub-group) and a missing selector
// leave the step's default.
TEST(Selector, StepsOfHierarchicalAlgorithmsAreSelectedForTheirSubGroup) {
  const Algorithm& ring = *findAlgorithm(Collective::kAllreduce, "ring");
  const Algorithm& binomial = *findAlgorithm(Collective::kBcast, "binomial");
  CollArgs slice;
  slice.coll = Collective::kAllreduce;
  slice.bytes = 4096;
  slice.count = 1024;
  const Selector defaults = selectorWith({});
  EXPECT_EQ(selectStep(&defaults, slice, 2, ring).name, "recursive_doubling");  // np=2 rule
  EXPECT_EQ(&selectStep(nullptr, slice, 2, ring), &ring);
  const Selector tuned = selectorWith({{"OVERPASS_TUNE", "allreduce:np=2:@knomial"}});
  EXPECT_EQ(selectStep(&tuned, slice, 2, ring).name, "knomial");
  const Selector library = selectorWith({{"OVERPASS_TUNE", "allreduce:@pmpi"}});
  EXPECT_EQ(&selectStep(&library, slice, 2, ring), &ring);
  // level=nodes rules decide the steps only, level=team rules whole calls only.
  const Selector levels = selectorWith(
      {{"OVERPASS_TUNE", "allreduce:level=nodes:@knomial#allreduce:level=team:@rabenseifner"}});
  EXPECT_EQ(selectStep(&levels, slice, 2, ring).name, "knomial");
  EXPECT_EQ(pick(levels, Collective::kAllreduce, 4096, 2), "rabenseifner");
  CollArgs tiny;
  tiny.coll = Collective::kBcast;
  tiny.bytes = tiny.count = 8;  // the built-in rules send it to the MPI library at np 3-4
  EXPECT_EQ(&selectStep(&defaults, tiny, 3, binomial), &binomial);
}

}  // namespace
}  // namespace overpass

namespace overpass {
namespace {

// The node steps of the hierarchical bcast, gather, scatter, gatherv and scatterv (the last two
// selected as calls of 0 bytes, but any size must give the same) are selected for the node's
// ranks: by default the node's shared memory where the node has a channel, else the tree or the
// linear algorithm (what they always ran), at every size and node size, whatever the rules of
// whole calls say; level=node rules decide them and nothing else.
TEST(Selector, NodeStepsOfHierarchicalAlgorithmsAreSelectedForTheNode) {
  const Selector defaults = selectorWith({});
  struct Step {
    Collective coll;
    const char* flat;
  };
  for (const Step step :
       {Step{Collective::kBcast, "binomial"}, Step{Collective::kGather, "linear"},
        Step{Collective::kScatter, "linear"}, Step{Collective::kGatherv, "linear"},
        Step{Collective::kScatterv, "linear"}}) {
    const Algorithm& flat = *findAlgorithm(step.coll, step.flat);
    const Algorithm& shm = *findAlgorithm(step.coll, "shm");
    for (int nodeSize = 1; nodeSize <= 16; ++nodeSize)
      for (std::size_t bytes : {std::size_t{0}, std::size_t{8}, std::size_t{600}, std::size_t{4096},
                                std::size_t{100000}, std::size_t{8} << 20}) {
        CollArgs a;
        a.coll = step.coll;
        a.bytes = a.count = bytes;
        const std::string at = std::string(collectiveName(step.coll)) + " node of " +
                               std::to_string(nodeSize) + ", " + std::to_string(bytes) + " B";
        EXPECT_EQ(&selectNodeStep(&defaults, a, nodeSize, 0, flat), &flat) << at;
        EXPECT_EQ(&selectNodeStep(&defaults, a, nodeSize, 64 * 1024, flat), &shm) << at;
        EXPECT_EQ(&selectNodeStep(nullptr, a, nodeSize, 64 * 1024, shm), &shm) << at;
      }
  }
  CollArgs a;
  a.coll = Collective::kBcast;
  a.bytes = a.count = 4096;
  const Algorithm& binomial = *findAlgorithm(Collective::kBcast, "binomial");
  const Selector tuned = selectorWith({{"OVERPASS_TUNE", "bcast:level=node:@chain"}});
  EXPECT_EQ(selectNodeStep(&tuned, a, 4, 0, binomial).name, "binomial");  // chain: >= 128 KiB
  a.bytes = a.count = 1 << 20;
  EXPECT_EQ(selectNodeStep(&tuned, a, 4, 1024, binomial).name, "chain");
  EXPECT_EQ(pick(tuned, Collective::kBcast, 1 << 20, 4),
            pick(defaults, Collective::kBcast, 1 << 20, 4));
  EXPECT_EQ(selectStep(&tuned, a, 4, binomial).name, selectStep(&defaults, a, 4, binomial).name);
  // The MPI library cannot run on a node's ranks: the fallback.
  const Selector library = selectorWith({{"OVERPASS_TUNE", "bcast:level=node:@pmpi"}});
  EXPECT_EQ(&selectNodeStep(&library, a, 4, 1024, binomial), &binomial);
  EXPECT_NE(tuneError("bcast:level=rack:@chain").find("level=node"), std::string::npos);
}

}  // namespace
}  // namespace overpass
