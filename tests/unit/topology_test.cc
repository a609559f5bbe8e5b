// Topology from injected places and records: every derived group for the layouts that matter
// (2 nodes x 4, 3+5 unbalanced, round-robin placement, 1 rank, 1 node, 4 nodes x 1, NUMA and
// socket splits), node emulation, the JSON round trip and its errors, the binding audit.
#include <gtest/gtest.h>

#include "topo/binding_audit.h"
#include "topo/job_topology.h"
#include "topo/topology.h"

namespace overpass {
namespace {

using Groups = std::vector<std::vector<int>>;

Topology fromNodes(const std::vector<int>& nodes) {
  std::vector<RankPlace> places;
  for (int n : nodes) places.push_back({n, -1, -1});
  return Topology::build(places);
}

TEST(Topology, TwoNodesOfFour) {
  const Topology t = fromNodes({7, 7, 7, 7, 3, 3, 3, 3});
  EXPECT_EQ(t.size(), 8);
  EXPECT_EQ(t.nodeCount(), 2);
  EXPECT_EQ(t.nodes(), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(t.leaders(), (std::vector<int>{0, 4}));
  EXPECT_EQ(t.rails(), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(t.nodeOf(5), 1);
  EXPECT_EQ(t.localRank(5), 1);
  EXPECT_EQ(t.maxRanksPerNode(), 4);
  EXPECT_TRUE(t.balanced());
  EXPECT_TRUE(t.contiguous());
  EXPECT_FALSE(t.singleNode());
  EXPECT_FALSE(t.onePerNode());
  EXPECT_EQ(t.summary(), "2 nodes x 4 ranks (balanced, contiguous)");
}

TEST(Topology, UnbalancedThreePlusFive) {
  const Topology t = fromNodes({0, 0, 0, 1, 1, 1, 1, 1});
  EXPECT_EQ(t.nodes(), (Groups{{0, 1, 2}, {3, 4, 5, 6, 7}}));
  EXPECT_EQ(t.leaders(), (std::vector<int>{0, 3}));
  EXPECT_EQ(t.rails(), (Groups{{0, 3}, {1, 4}, {2, 5}, {6}, {7}}));
  EXPECT_EQ(t.localRank(7), 4);
  EXPECT_EQ(t.maxRanksPerNode(), 5);
  EXPECT_FALSE(t.balanced());
  EXPECT_TRUE(t.contiguous());
  EXPECT_EQ(t.summary(), "2 nodes: 3+5 ranks (unbalanced, contiguous)");
}

// Nodes of different sizes, a node of one rank among them (2+1+1): every node is on every full
// rail, the smaller ones through an earlier local rank; the rails of Topology::rails() skip them.
TEST(Topology, UnequalNodesFullRailsReachEveryNode) {
  const Topology t = fromNodes({0, 0, 1, 2});
  EXPECT_EQ(t.nodes(), (Groups{{0, 1}, {2}, {3}}));
  EXPECT_EQ(t.nodeSize(0), 2);
  EXPECT_EQ(t.nodeSize(2), 1);
  EXPECT_EQ(t.rails(), (Groups{{0, 2, 3}, {1}}));
  EXPECT_EQ(t.fullRail(0), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(t.fullRail(1), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(t.summary(), "3 nodes: 2+1+1 ranks (unbalanced, contiguous)");
  // 3+1 with the lone rank inside (not contiguous), and 4+2+1 scattered: local rank k modulo
  // each node's size.
  const Topology u = fromNodes({0, 1, 0, 0});
  EXPECT_EQ(u.fullRail(2), (std::vector<int>{3, 1}));
  const Topology v = fromNodes({1, 0, 1, 2, 0, 1, 1});
  EXPECT_EQ(v.nodes(), (Groups{{0, 2, 5, 6}, {1, 4}, {3}}));
  EXPECT_EQ(v.fullRail(3), (std::vector<int>{6, 4, 3}));
  EXPECT_EQ(v.fullRail(2), (std::vector<int>{5, 1, 3}));
  // Balanced: the full rails are the rails.
  const Topology w = fromNodes({0, 1, 2, 0, 1, 2});
  for (int k = 0; k < 2; ++k) EXPECT_EQ(w.fullRail(k), w.rails()[k]);
}

TEST(Topology, RoundRobinPlacement) {
  const Topology t = fromNodes({0, 1, 2, 0, 1, 2});
  EXPECT_EQ(t.nodes(), (Groups{{0, 3}, {1, 4}, {2, 5}}));
  EXPECT_EQ(t.leaders(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.rails(), (Groups{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(t.localRank(4), 1);
  EXPECT_TRUE(t.balanced());
  EXPECT_FALSE(t.contiguous());
}

TEST(Topology, OneRank) {
  const Topology t = fromNodes({5});
  EXPECT_EQ(t.nodes(), (Groups{{0}}));
  EXPECT_EQ(t.leaders(), (std::vector<int>{0}));
  EXPECT_EQ(t.rails(), (Groups{{0}}));
  EXPECT_TRUE(t.singleNode());
  EXPECT_TRUE(t.onePerNode());
  EXPECT_TRUE(t.balanced());
  EXPECT_TRUE(t.contiguous());
  EXPECT_EQ(t.summary(), "1 node x 1 rank (balanced, contiguous)");
}

TEST(Topology, OneNode) {
  const Topology t = fromNodes({2, 2, 2, 2, 2});
  EXPECT_EQ(t.nodes(), (Groups{{0, 1, 2, 3, 4}}));
  EXPECT_EQ(t.leaders(), (std::vector<int>{0}));
  EXPECT_EQ(t.rails(), (Groups{{0}, {1}, {2}, {3}, {4}}));
  EXPECT_TRUE(t.singleNode());
}

TEST(Topology, FourNodesOfOne) {
  const Topology t = fromNodes({0, 1, 2, 3});
  EXPECT_EQ(t.nodes(), (Groups{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(t.leaders(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.rails(), (Groups{{0, 1, 2, 3}}));
  EXPECT_TRUE(t.onePerNode());
  EXPECT_TRUE(t.balanced());
  EXPECT_TRUE(t.contiguous());
}

TEST(Topology, NumaAndSocketSplitsInsideNodes) {
  // Two nodes; on each, two sockets with one NUMA domain each, the last rank unbound (-1).
  const std::vector<RankPlace> places = {
      {0, 0, 0}, {0, 0, 0}, {0, 1, 1}, {0, 1, 1}, {0, -1, -1},
      {1, 0, 0}, {1, 1, 1}, {1, 0, 0}, {1, 1, 1}, {1, -1, -1},
  };
  const Topology t = Topology::build(places);
  EXPECT_EQ(t.numaGroups(), (Groups{{0, 1}, {2, 3}, {4}, {5, 7}, {6, 8}, {9}}));
  EXPECT_EQ(t.socketGroups(), t.numaGroups());
  // NUMA domains split a socket: grouping differs between the two levels.
  const Topology u = Topology::build(std::vector<RankPlace>{{0, 0, 0}, {0, 0, 1}, {0, 0, 1}});
  EXPECT_EQ(u.socketGroups(), (Groups{{0, 1, 2}}));
  EXPECT_EQ(u.numaGroups(), (Groups{{0}, {1, 2}}));
}

std::vector<Locality> hosts(const std::vector<std::string>& names) {
  std::vector<Locality> out;
  for (const auto& n : names) {
    Locality l;
    l.hostname = n;
    out.push_back(l);
  }
  return out;
}

TEST(JobTopology, NodesFromHostnamesAndEmulation) {
  const auto ranks = hosts({"a", "a", "b", "b", "a", "a", "b", "b"});
  EXPECT_EQ(nodeIndices(ranks, 0), (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
  // Emulation splits each host's ranks into virtual nodes of 2 consecutive (on that host) ranks.
  EXPECT_EQ(nodeIndices(ranks, 2), (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(nodeIndices(hosts({"h", "h", "h", "h", "h"}), 2), (std::vector<int>{0, 0, 1, 1, 2}));
  EXPECT_EQ(nodeIndices(hosts({"h", "h", "h"}), 1), (std::vector<int>{0, 1, 2}));
}

TEST(JobTopology, OversubscribedWhenAHostHasMoreRanksThanCores) {
  JobTopology job;
  for (int r = 0; r < 5; ++r) {
    Locality l;
    l.hostname = r < 3 ? "a" : "b";  // 3 ranks on 2 cores, 2 ranks on 2 cores
    l.nodeCores = 2;
    job.ranks.push_back(l);
  }
  EXPECT_TRUE(job.oversubscribed(0));
  EXPECT_TRUE(job.oversubscribed(2));
  EXPECT_FALSE(job.oversubscribed(3));
  job.ranks[4].nodeCores = 0;  // unknown: not oversubscribed
  EXPECT_FALSE(job.oversubscribed(4));
}

TEST(JobTopology, CommunicatorTopologyByRankTranslation) {
  JobTopology job;
  job.ranks = hosts({"a", "a", "b", "b"});
  job.node = {0, 0, 1, 1};
  // A communicator of world ranks 3, 0, 2 (in that order).
  const Topology t = job.topologyOf({3, 0, 2});
  EXPECT_EQ(t.nodes(), (Groups{{0, 2}, {1}}));
  EXPECT_FALSE(t.contiguous());
  EXPECT_FALSE(t.balanced());
}

JobTopology sampleJob() {
  JobTopology job;
  for (int r = 0; r < 6; ++r) {
    Locality l;
    l.hostname = r < 3 ? "alpha" : "beta";
    l.socket = r % 2;
    l.numa = r % 2;
    l.cpuset = std::to_string(r);
    l.bound = true;
    l.nodeCores = 16;
    l.l3Bytes = 32 << 20;
    if (r == 1) l.gpus = {"0000:3b:00.0"};
    l.nics = {"eth0", "mlx5_0"};
    job.ranks.push_back(l);
  }
  job.node = nodeIndices(job.ranks, 0);
  return job;
}

TEST(JobTopology, JsonRoundTripReproducesTheHierarchy) {
  const JobTopology job = sampleJob();
  const std::string text = topologyToJson(job);
  JobTopology loaded;
  std::string error;
  ASSERT_TRUE(topologyFromJson(text, "dump.json", &loaded, &error)) << error;
  EXPECT_EQ(loaded.node, job.node);
  EXPECT_EQ(loaded.ranks, job.ranks);
  EXPECT_EQ(loaded.world().nodes(), job.world().nodes());
  EXPECT_EQ(loaded.world().numaGroups(), job.world().numaGroups());
  EXPECT_EQ(topologyToJson(loaded), text);
  for (const char* field : {"\"rank\"", "\"node\"", "\"hostname\"", "\"local_rank\"", "\"numa\"",
                            "\"socket\"", "\"cpuset\"", "\"gpus\"", "\"nics\"", "\"groups\""})
    EXPECT_NE(text.find(field), std::string::npos) << field;
}

TEST(JobTopology, MinimalFileNeedsOnlyRanksAndNodes) {
  JobTopology job;
  std::string error;
  ASSERT_TRUE(topologyFromJson(R"({"ranks": [{"rank": 1, "node": 0}, {"rank": 0, "node": 4}]})",
                               "min.json", &job, &error))
      << error;
  EXPECT_EQ(job.node, (std::vector<int>{4, 0}));
  EXPECT_EQ(job.ranks[0].numa, -1);
  EXPECT_EQ(job.world().nodes(), (Groups{{0}, {1}}));
}

TEST(JobTopology, MalformedFilesNameTheFileAndTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"{not json", "not valid JSON"},
      {R"({"nodes": []})", "no \"ranks\" array"},
      {R"({"ranks": []})", "\"ranks\" is empty"},
      {R"({"ranks": [{"node": 0}]})", "ranks[0] has no integer \"rank\""},
      {R"({"ranks": [{"rank": 0}]})", "ranks[0] has no integer \"node\""},
      {R"({"ranks": [{"rank": 0, "node": 0}, {"rank": 0, "node": 1}]})",
       "ranks[1].rank: rank 0 is repeated (ranks must be 0..1, each once)"},
      {R"({"ranks": [{"rank": 5, "node": 0}]})",
       "ranks[0].rank: 5 is out of range: must be an integer from 0 to 0"},
      {R"({"ranks": [{"rank": 0, "node": -2}]})",
       "ranks[0].node: -2 is out of range: must be an integer from 0 to 2147483647"},
      {R"({"ranks": [{"rank": 0, "node": 0, "numa": "x"}]})",
       "ranks[0].numa: must be an integer from -1 to 2147483647 (it is a string)"},
      {R"({"ranks": [3]})", "ranks[0] is not an object"},
      // Integers that used to wrap: node 2^32 became node 0, rank 2^32 + 1 rank 1.
      {R"({"ranks": [{"rank": 0, "node": 4294967296}]})",
       "ranks[0].node: 4294967296 is out of range: must be an integer from 0 to 2147483647"},
      {R"({"ranks": [{"rank": 0, "node": 0}, {"rank": 4294967297, "node": 0}]})",
       "ranks[1].rank: 4294967297 is out of range: must be an integer from 0 to 1"},
      {R"({"ranks": [{"rank": 0, "node": 18446744073709551615}]})",
       "ranks[0].node: 18446744073709551615 is out of range"},
      {R"({"ranks": [{"rank": 0, "node": 0, "socket": -4294967295}]})",
       "ranks[0].socket: -4294967295 is out of range: must be an integer from -1 to 2147483647"},
      {R"({"ranks": [{"rank": 0, "node": 0, "pid": 2147483648}]})",
       "ranks[0].pid: 2147483648 is out of range"},
      {R"({"ranks": [{"rank": 0, "node": 0, "node_cores": -1}]})", "ranks[0].node_cores: -1"},
      {R"({"ranks": [{"rank": 0, "node": 0, "l3_bytes": -1}]})", "ranks[0].l3_bytes: -1"},
      {R"({"ranks": [{"rank": 0, "node": 0, "numa": 1.5}]})",
       "ranks[0].numa: must be an integer from -1 to 2147483647 (it is a number)"},
      // Wrong types, each named with the entry and the field.
      {R"({"ranks": [{"rank": 0, "node": 0}, {"rank": 1, "node": 0, "hostname": 7}]})",
       "ranks[1].hostname: must be a string (it is a number)"},
      {R"({"ranks": [{"rank": 0, "node": 0, "bound": "yes"}]})",
       "ranks[0].bound: must be true or false (it is a string)"},
      {R"({"ranks": [{"rank": 0, "node": 0, "cpuset": [0, 1]}]})",
       "ranks[0].cpuset: must be a string (it is an array)"},
      {R"({"ranks": [{"rank": 0, "node": 0, "gpus": "0000:3b:00.0"}]})",
       "ranks[0].gpus: must be an array of strings (it is a string)"},
      {R"({"ranks": [{"rank": 0, "node": 0, "nics": ["eth0", null]}]})",
       "ranks[0].nics[1] must be a string (it is null)"},
  };
  for (const auto& [text, problem] : cases) {
    JobTopology job;
    std::string error;
    EXPECT_FALSE(topologyFromJson(text, "bad.json", &job, &error)) << text;
    EXPECT_EQ(error.rfind("topology file 'bad.json': ", 0), 0u) << error;
    EXPECT_NE(error.find(problem), std::string::npos) << error;
  }
}

TEST(BindingAudit, SummaryAndWarnings) {
  JobTopology job = sampleJob();
  auto lines = bindingAudit(job);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "topology: 2 nodes x 3 ranks (balanced, contiguous); 6 of 6 ranks bound to cpus");
  EXPECT_EQ(lines[1], "ranks 0,2 are bound away from every GPU of their node");
  job.ranks[4].bound = false;
  job.ranks[5].numa = -1;
  job.ranks[3].nics.clear();
  lines = bindingAudit(job);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[0].find("5 of 6 ranks bound"), std::string::npos);
  EXPECT_EQ(lines[1],
            "ranks 4 are not bound to cpus: the scheduler may move them (mpirun --bind-to core)");
  EXPECT_EQ(lines[2], "ranks 5 are bound across NUMA domains");
  EXPECT_EQ(lines[4], "ranks 3 are bound away from every NIC of their node");
}

TEST(Locality, CacheSizesAreClamped) {
  EXPECT_EQ(clampCacheBytes(508u << 20), kMaxCacheBytes);
  EXPECT_EQ(clampCacheBytes(0), kMinCacheBytes);
  EXPECT_EQ(clampCacheBytes(1024), kMinCacheBytes);
  EXPECT_EQ(clampCacheBytes(32u << 20), 32u << 20);
}

TEST(Locality, ProbeOfThisProcess) {
  const Locality l = probeLocality();
  EXPECT_FALSE(l.hostname.empty());
  EXPECT_GE(l.nodeCores, 1);
  EXPECT_FALSE(l.cpuset.empty());
  EXPECT_GE(l.l3Bytes, kMinCacheBytes);
  EXPECT_LE(l.l3Bytes, kMaxCacheBytes);
}

}  // namespace
}  // namespace overpass
