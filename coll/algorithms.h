// Every algorithm of coll/, one per file under coll/<collective>/; each file's header comment
// states its steps, cost, preconditions and where the result lands. Registered in registry.cc.
#pragma once

#include "coll/coll_args.h"
#include "coll/team.h"
#include "common/log.h"
#include "common/status.h"

namespace overpass {

// The registry's `serves` (coll/select/registry.cc) owns each algorithm's precondition, stated on
// the call's shape; the selector never picks an algorithm for a call it does not serve. An
// algorithm run anyway on such a call (a direct call) does not run another one in its place: it
// does nothing and returns Status::kDeclined, deciding on facts every rank shares (sizes, counts,
// the team's nodes), so that every rank declines alike and the caller can hand the call to the MPI
// library.
inline Status decline(Collective coll, const char* algorithm, const char* reason) {
  OVERPASS_DEBUG("%s %s declines the call: %s", collectiveName(coll).data(), algorithm, reason);
  return Status::kDeclined;
}

Status allreduceRecursiveDoubling(const CollArgs& args, Team& team);
Status allreduceRing(const CollArgs& args, Team& team);
Status allreduceRabenseifner(const CollArgs& args, Team& team);
inline constexpr int kAllreduceKnomialRadix = 4;  // allreduceKnomial's tree radix
Status allreduceKnomial(const CollArgs& args, Team& team);
Status allreduceRankOrder(const CollArgs& args, Team& team);
Status allreduceRankOrderRoot(const CollArgs& args, Team& team);
Status allreduceHierarchical(const CollArgs& args, Team& team);
Status bcastBinomial(const CollArgs& args, Team& team);
Status bcastScatterAllgather(const CollArgs& args, Team& team);
inline constexpr std::size_t kBcastChainChunk = 64 * 1024;  // bcastChain's pipeline chunk
Status bcastChain(const CollArgs& args, Team& team);
Status bcastHierarchical(const CollArgs& args, Team& team);
Status reduceBinomial(const CollArgs& args, Team& team);
Status reduceHierarchical(const CollArgs& args, Team& team);
Status reduceReduceScatterGather(const CollArgs& args, Team& team);
Status reduceRankOrder(const CollArgs& args, Team& team);
Status gatherLinear(const CollArgs& args, Team& team);
Status gatherBinomial(const CollArgs& args, Team& team);
Status gatherHierarchical(const CollArgs& args, Team& team);
Status scatterLinear(const CollArgs& args, Team& team);
Status scatterBinomial(const CollArgs& args, Team& team);
Status scatterHierarchical(const CollArgs& args, Team& team);
Status allgatherRing(const CollArgs& args, Team& team);
Status allgatherRecursiveDoubling(const CollArgs& args, Team& team);
Status allgatherBruck(const CollArgs& args, Team& team);
Status alltoallPairwise(const CollArgs& args, Team& team);
Status alltoallBruck(const CollArgs& args, Team& team);
inline constexpr int kAlltoallLinearBatch = 4;  // alltoallLinear's exchanges per batch
Status alltoallLinear(const CollArgs& args, Team& team);
Status reduceScatterBlockRing(const CollArgs& args, Team& team);
Status reduceScatterBlockRecursiveHalving(const CollArgs& args, Team& team);
Status reduceScatterBlockRankOrder(const CollArgs& args, Team& team);
Status barrierDissemination(const CollArgs& args, Team& team);
// The vector collectives (blocks of different sizes: CollArgs's BlockLayout) and the scans.
Status allgathervRing(const CollArgs& args, Team& team);
Status allgathervBruck(const CollArgs& args, Team& team);
Status alltoallvPairwise(const CollArgs& args, Team& team);
Status alltoallvLinear(const CollArgs& args, Team& team);
// Blocks of up to this many bytes travel aggregated across nodes (less where the node channels'
// slots are smaller): the latency-bound ones.
inline constexpr std::size_t kAlltoallvAggregateUpTo = 4096;
Status alltoallvHierarchical(const CollArgs& args, Team& team);
Status gathervLinear(const CollArgs& args, Team& team);
Status gathervBinomial(const CollArgs& args, Team& team);
Status gathervHierarchical(const CollArgs& args, Team& team);
Status scattervLinear(const CollArgs& args, Team& team);
Status scattervBinomial(const CollArgs& args, Team& team);
Status scattervHierarchical(const CollArgs& args, Team& team);
Status reduceScatterRing(const CollArgs& args, Team& team);
Status reduceScatterRankOrder(const CollArgs& args, Team& team);
Status reduceScatterHierarchical(const CollArgs& args, Team& team);
Status scanLinear(const CollArgs& args, Team& team);
Status scanRecursiveDoubling(const CollArgs& args, Team& team);
Status exscanLinear(const CollArgs& args, Team& team);
Status exscanRecursiveDoubling(const CollArgs& args, Team& team);

// Through the node's shared-memory channel (team.shm): teams on one node.
Status allreduceShm(const CollArgs& args, Team& team);
Status allreduceCma(const CollArgs& args, Team& team);
Status bcastShm(const CollArgs& args, Team& team);
Status reduceShm(const CollArgs& args, Team& team);
Status reduceCma(const CollArgs& args, Team& team);
Status gatherShm(const CollArgs& args, Team& team);
Status scatterShm(const CollArgs& args, Team& team);
Status allgatherShm(const CollArgs& args, Team& team);
Status alltoallShm(const CollArgs& args, Team& team);
Status reduceScatterBlockShm(const CollArgs& args, Team& team);
Status barrierShm(const CollArgs& args, Team& team);
Status allgathervShm(const CollArgs& args, Team& team);
Status alltoallvShm(const CollArgs& args, Team& team);
Status gathervShm(const CollArgs& args, Team& team);
Status scattervShm(const CollArgs& args, Team& team);
// Through posts of the node's channel (shm/channel.h): small messages, no round. They serve a
// team whose channel has post boxes, each message in one post.
inline bool fitsPosts(const CollArgs& args, const Team& team) {
  return team.shm && team.shm->posts() && args.bytes <= ShmChannel::kPostBytes;
}
Status bcastPost(const CollArgs& args, Team& team);
Status gatherPost(const CollArgs& args, Team& team);
Status scatterPost(const CollArgs& args, Team& team);
Status reduceScatterShm(const CollArgs& args, Team& team);
Status scanShm(const CollArgs& args, Team& team);
Status exscanShm(const CollArgs& args, Team& team);

}  // namespace overpass
