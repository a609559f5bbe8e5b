#include "coll/select/registry.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "coll/algorithms.h"
#include "coll/device/device_ipc.h"
#include "common/stats.h"

namespace overpass {
namespace {

using enum Collective;

#define OVERPASS_PMPI(c)                                                                           \
  Algorithm {                                                                                      \
    c, kPmpiName, "the MPI library's own implementation (PMPI)", nullptr, nullptr, nullptr, false, \
        AlgorithmKind::kPmpi                                                                       \
  }
// coll/device/device_ipc.h: one function for the three collectives, on one node, for device memory
// (rules only: docs/GPU.md). Results combine in rank order.
constexpr bool deviceOnOneNode(const CallShape& c) {
  return c.mem == CallMemory::kDevice && c.shmBuffer > 0 && c.bytes > 0;
}
#define OVERPASS_DEVICE_IPC(c, description)                                    \
  Algorithm {                                                                  \
    c, kDeviceIpcName, description, deviceIpc, nullptr, deviceOnOneNode, true, \
        AlgorithmKind::kDevice                                                 \
  }
// The staging pipeline of the shim (docs/GPU.md): every chunk is a call of its own, selected for
// its size, so deterministic mode holds where the chunks' algorithms keep it (they are selected
// as ordered calls). Rules only.
constexpr bool splittableOnDevice(const CallShape& c) {
  return c.mem == CallMemory::kDevice && c.splittable;
}
#define OVERPASS_STAGED_PIPELINE(c)                                                              \
  Algorithm {                                                                                    \
    c, kStagedPipelineName,                                                                      \
        "device buffers: the call in chunks, each a call of its own on host copies, the copies " \
        "to and from the device overlapping the chunks' collectives",                            \
        nullptr, nullptr, splittableOnDevice, true, AlgorithmKind::kPipeline                     \
  }

// Cost formulas (coll/select/cost_model.h): p ranks, n = call.bytes (one rank's contribution),
// alpha per message round, beta per byte sent, gamma per byte reduced. Each algorithm file's header
// comment derives its formula.
constexpr double pOf(const CallShape& c) {
  return c.teamSize;
}
// The shm algorithms serve teams that share a channel (one node); those that put p chunks in one
// buffer need room for p chunks of the largest element (64 bytes).
constexpr bool onOneNode(const CallShape& c) {
  return c.shmBuffer > 0;
}
constexpr bool onOneNodeWithRoomForP(const CallShape& c) {
  return c.shmBuffer >= static_cast<std::size_t>(c.teamSize) * 64;
}
// The cma algorithms: a CmaCard (coll/phases/cma.h) in one buffer.
constexpr bool onOneNodeWithRoomForACard(const CallShape& c) {
  return c.shmBuffer >= 64;
}
// The post algorithms: a channel with post boxes, and each message in one post.
constexpr bool onOneNodeInPosts(const CallShape& c) {
  return c.shmBuffer > 0 && c.teamSize <= ShmArena::kPostRanks && c.bytes <= ShmArena::kPostBytes;
}
// Shared-memory cost: a round (flag write, p flag reads) is far cheaper than a message; the
// bytes are copies (and reductions) in memory. `rounds` and `bytes` per call.
constexpr double shmCost(const CostModel& m, double rounds, double bytes) {
  return rounds * m.alpha / 8 + bytes * m.gamma;
}
constexpr double chunks(const CallShape& c, double bytes) {
  return c.shmBuffer ? std::max(1.0, bytes / static_cast<double>(c.shmBuffer)) : 1;
}
// A rank's p - 1 blocks for the others through the buffer, copied in and out, its own once.
constexpr double shmOthersCost(const CallShape& c, const CostModel& m) {
  const double others = c.bytes * (pOf(c) - 1);
  return shmCost(m, chunks(c, others), 2.0 * others + c.bytes);
}

// allreduce rank_order_root keeps p vectors at rank 0; above this it does not serve.
constexpr std::size_t kRankOrderRootLimit = std::size_t{64} << 20;

constexpr bool atLeastOneElementPerRank(const CallShape& c) {
  return c.count >= static_cast<std::size_t>(c.teamSize);
}

constexpr std::array kAlgorithms = {
    // ---- allreduce ----
    OVERPASS_PMPI(kAllreduce),
    Algorithm{kAllreduce, "recursive_doubling",
              "log2(p) pairwise exchanges of the whole vector; non-power-of-two ranks fold in",
              allreduceRecursiveDoubling,
              [](const CallShape& c, const CostModel& m) {
                const double steps =
                    ceilLog2(floorPow2(c.teamSize)) + (floorPow2(c.teamSize) < c.teamSize ? 2 : 0);
                return steps * (m.alpha + c.bytes * (m.beta + m.gamma));
              }},
    Algorithm{kAllreduce, "ring",
              "reduce-scatter then allgather around a ring, n/p per step: for large vectors",
              allreduceRing,
              [](const CallShape& c, const CostModel& m) {
                const double p = pOf(c), share = (p - 1) / p * c.bytes;
                return 2 * (p - 1) * m.alpha + 2 * share * m.beta + share * m.gamma;
              },
              atLeastOneElementPerRank},
    Algorithm{kAllreduce, "rabenseifner",
              "reduce-scatter by recursive halving, allgather by recursive doubling: for large "
              "vectors; non-power-of-two ranks fold in",
              allreduceRabenseifner,
              [](const CallShape& c, const CostModel& m) {
                const int p2 = floorPow2(c.teamSize);
                const double share = (p2 - 1.0) / p2 * c.bytes;
                const double fold =
                    p2 < c.teamSize ? 2 * m.alpha + c.bytes * (2 * m.beta + m.gamma) : 0;
                return 2 * ceilLog2(p2) * m.alpha + 2 * share * m.beta + share * m.gamma + fold;
              },
              [](const CallShape& c) {
                return c.count >= static_cast<std::size_t>(floorPow2(c.teamSize));
              }},
    Algorithm{kAllreduce, "knomial",
              "k-nomial tree (radix 4) reduce to rank 0, then broadcast back: few rounds for "
              "small vectors on larger teams",
              allreduceKnomial,
              [](const CallShape& c, const CostModel& m) {
                constexpr int k = kAllreduceKnomialRadix;
                int levels = 0;
                for (long span = 1; span < c.teamSize; span *= k) ++levels;
                return levels * (2 * m.alpha + (k - 1) * c.bytes * (2 * m.beta + m.gamma));
              }},
    Algorithm{kAllreduce, "rank_order",
              "rank-order reduce-scatter (each block combined in rank order on its owner), then "
              "ring allgather: deterministic mode, medium and large vectors",
              allreduceRankOrder,
              [](const CallShape& c, const CostModel& m) {
                const double p = pOf(c), share = (p - 1) / p * c.bytes;
                return 2 * (p - 1) * m.alpha + 2 * share * m.beta + share * m.gamma;
              },
              nullptr, true},
    Algorithm{kAllreduce, "rank_order_root",
              "every vector to rank 0, combined there in rank order, then binomial broadcast: "
              "deterministic mode, small vectors",
              allreduceRankOrderRoot,
              [](const CallShape& c, const CostModel& m) {
                const double p = pOf(c);
                return (p - 1) * (m.alpha + c.bytes * (m.beta + m.gamma)) +
                       ceilLog2(c.teamSize) * (m.alpha + c.bytes * m.beta);
              },
              // Rank 0 holds every rank's vector at once: bounded, rank_order takes over.
              [](const CallShape& c) {
                return c.bytes * static_cast<std::size_t>(c.teamSize) <= kRankOrderRootLimit;
              },
              true},
    Algorithm{kAllreduce, "hierarchical",
              "reduce-scatter in each node, allreduce of each slice among its owners, one per "
              "node (in parallel), allgather in each node; nodes may hold different numbers of "
              "ranks",
              allreduceHierarchical,
              // One cost model for every level cannot weigh the traffic it saves between nodes:
              // chosen by rules only (docs/TUNING.md).
              nullptr,
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2 && c.count >= 1; }},
    Algorithm{kAllreduce, "shm",
              "node shared memory: copy in, each rank reduces its slice of all in rank order, "
              "copy out; 2 rounds per buffer-sized chunk",
              allreduceShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, 2 * chunks(c, c.bytes), 3.0 * c.bytes);
              },
              onOneNode, true},
    Algorithm{kAllreduce, "cma",
              "one node: each rank reads its block of the peers' vectors from their memory "
              "(process_vm_readv) and reduces it; the reduced blocks to every rank through "
              "node shared memory",
              allreduceCma,
              nullptr,  // chosen by rules only (measured on one machine)
              onOneNodeWithRoomForACard, true},
    OVERPASS_STAGED_PIPELINE(kAllreduce),
    OVERPASS_DEVICE_IPC(kAllreduce,
                        "device buffers on one node: each rank reduces its slice of the peers' "
                        "buffers on the device (IPC), then copies the others' slices"),
    // ---- bcast ----
    OVERPASS_PMPI(kBcast),
    Algorithm{kBcast, "binomial", "binomial tree from the root", bcastBinomial,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * (m.alpha + c.bytes * m.beta);
              }},
    Algorithm{kBcast, "scatter_allgather",
              "binomial scatter of p pieces, then a ring allgather (van de Geijn): for large "
              "messages",
              bcastScatterAllgather,
              [](const CallShape& c, const CostModel& m) {
                const double p = pOf(c), share = (p - 1) / p * c.bytes;
                return (ceilLog2(c.teamSize) + p - 1) * m.alpha + 2 * share * m.beta;
              },
              [](const CallShape& c) { return c.bytes >= static_cast<std::size_t>(c.teamSize); }},
    Algorithm{kBcast, "chain", "pipelined chain from the root in 64 KiB chunks: for large messages",
              bcastChain,
              [](const CallShape& c, const CostModel& m) {
                const std::size_t chunks = (c.bytes + kBcastChainChunk - 1) / kBcastChainChunk;
                const double chunk = c.bytes < kBcastChainChunk ? c.bytes : kBcastChainChunk;
                const double steps = pOf(c) - 2 + (chunks > 0 ? chunks : 1);
                return steps * (m.alpha + chunk * m.beta);
              },
              [](const CallShape& c) { return c.bytes >= 2 * kBcastChainChunk; }},
    Algorithm{kBcast, "hierarchical",
              "binomial bcast among the root's rail (one copy per node), then within each node "
              "(shared memory, or a binomial tree)",
              bcastHierarchical, nullptr,  // chosen by rules only, as the hierarchical allreduce
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    Algorithm{kBcast, "shm", "node shared memory: the root copies in, every rank copies out",
              bcastShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes), 2.0 * c.bytes);
              },
              onOneNode},
    Algorithm{kBcast, "post",
              "node shared memory, no round: the root posts the message to every rank's queue",
              bcastPost, nullptr,  // chosen by rules only: measured where it was faster
              onOneNodeInPosts},
    OVERPASS_DEVICE_IPC(kBcast,
                        "device buffers on one node: every rank copies the root's buffer (IPC)"),
    // ---- scatter ----
    OVERPASS_PMPI(kScatter),
    Algorithm{kScatter, "linear", "the root sends each rank its block", scatterLinear,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * m.beta);
              }},
    Algorithm{kScatter, "binomial", "binomial tree from the root, subtrees' blocks forwarded",
              scatterBinomial,
              [](const CallShape& c, const CostModel& m) {
                // The root's p - 1 blocks, after the largest subtree's p/2 blocks were forwarded
                // once on the way: linear wins once a block outweighs a latency.
                return ceilLog2(c.teamSize) * m.alpha +
                       (pOf(c) - 1 + c.teamSize / 2) * c.bytes * m.beta;
              }},
    Algorithm{kScatter, "hierarchical",
              "the root scatters one buffer per node along its rail, then each node's rank on it "
              "scatters within the node (shared memory, or linear)",
              scatterHierarchical, nullptr,  // chosen by rules only, as the hierarchical allreduce
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    Algorithm{kScatter, "shm", "node shared memory: the root copies the other ranks' blocks in",
              scatterShm, shmOthersCost,
              onOneNodeWithRoomForP},
    Algorithm{kScatter, "post",
              "node shared memory, no round: the root posts each rank its block to its queue",
              scatterPost, nullptr,  // chosen by rules only: measured where it was faster
              onOneNodeInPosts},
    // ---- gather ----
    OVERPASS_PMPI(kGather),
    Algorithm{kGather, "linear", "every rank sends its block to the root", gatherLinear,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * m.beta);
              }},
    Algorithm{kGather, "binomial", "binomial tree towards the root, subtrees' blocks collected",
              gatherBinomial,
              [](const CallShape& c, const CostModel& m) {
                // The root's p - 1 blocks, after the largest subtree's p/2 blocks were forwarded
                // once on the way: linear wins once a block outweighs a latency.
                return ceilLog2(c.teamSize) * m.alpha +
                       (pOf(c) - 1 + c.teamSize / 2) * c.bytes * m.beta;
              }},
    Algorithm{kGather, "hierarchical",
              "each node's rank on the root's rail gathers its node (shared memory, or linear), "
              "then the node buffers go to the root along the rail",
              gatherHierarchical, nullptr,  // chosen by rules only, as the hierarchical allreduce
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    Algorithm{kGather, "shm", "node shared memory: every rank copies in, the root copies out",
              gatherShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes), 2.0 * c.bytes * c.teamSize);
              },
              onOneNode},
    Algorithm{kGather, "post",
              "node shared memory, no round: every rank posts its block to the root's queue",
              gatherPost, nullptr,  // chosen by rules only: measured where it was faster
              onOneNodeInPosts},
    // ---- alltoall ----
    OVERPASS_PMPI(kAlltoall),
    Algorithm{kAlltoall, "pairwise", "p-1 exchange steps, step s pairs rank r with r+s and r-s",
              alltoallPairwise,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * m.beta);
              }},
    Algorithm{kAlltoall, "bruck",
              "Bruck: ceil(log2(p)) steps of up to p/2 packed blocks: for small blocks",
              alltoallBruck,
              [](const CallShape& c, const CostModel& m) {
                const double steps = ceilLog2(c.teamSize), half = c.teamSize / 2;
                return steps * (m.alpha + half * c.bytes * m.beta) +
                       steps * pOf(c) * c.bytes * m.gamma;  // packing and unpacking
              }},
    Algorithm{kAlltoall, "linear", "every exchange posted, 4 at a time with up to 8 in flight",
              alltoallLinear,
              [](const CallShape& c, const CostModel& m) {
                const int batches =
                    (c.teamSize - 1 + kAlltoallLinearBatch - 1) / kAlltoallLinearBatch;
                return batches * m.alpha + (pOf(c) - 1) * c.bytes * m.beta;
              }},
    Algorithm{kAlltoall, "shm",
              "node shared memory: every rank copies its p - 1 blocks for the others in and "
              "theirs for it out",
              alltoallShm, shmOthersCost,
              onOneNodeWithRoomForP},
    OVERPASS_DEVICE_IPC(kAlltoall,
                        "device buffers on one node: each rank copies its block of every peer's "
                        "send buffer (IPC)"),
    // ---- reduce ----
    OVERPASS_PMPI(kReduce),
    Algorithm{kReduce, "binomial", "binomial tree towards the root (commutative operations)",
              reduceBinomial,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * (m.alpha + c.bytes * (m.beta + m.gamma));
              }},
    Algorithm{kReduce, "reduce_scatter_gather",
              "ring reduce-scatter, then the reduced blocks gathered along a binomial tree "
              "(commutative operations): for large vectors",
              reduceReduceScatterGather,
              [](const CallShape& c, const CostModel& m) {
                const double p = pOf(c), share = (p - 1) / p * c.bytes;
                return (p - 1 + ceilLog2(c.teamSize)) * m.alpha + 2 * share * m.beta +
                       share * m.gamma;
              },
              atLeastOneElementPerRank},
    Algorithm{kReduce, "rank_order",
              "rank-order reduce-scatter, then the blocks to the root: deterministic mode",
              reduceRankOrder,
              [](const CallShape& c, const CostModel& m) {
                const double p = pOf(c), share = (p - 1) / p * c.bytes;
                return 2 * (p - 1) * m.alpha + 2 * share * m.beta + share * m.gamma;
              },
              nullptr, true},
    Algorithm{kReduce, "hierarchical",
              "reduce-scatter in each node, binomial reduce of each slice among its owners, one "
              "per node, towards the root's node (in parallel), slices to the root",
              reduceHierarchical, nullptr,  // chosen by rules only, as the hierarchical allreduce
              [](const CallShape& c) {
                return c.nodes >= 2 && c.maxPerNode >= 2 &&
                       c.count >= static_cast<std::size_t>(c.maxPerNode);
              }},
    Algorithm{kReduce, "shm",
              "node shared memory: as the shm allreduce, only the root copies out",
              reduceShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, 2 * chunks(c, c.bytes), 2.0 * c.bytes);
              },
              onOneNode, true},
    Algorithm{kReduce, "cma",
              "one node: each rank reads its block of the peers' vectors from their memory "
              "(process_vm_readv), reduces it and writes it into the root's (process_vm_writev)",
              reduceCma,
              nullptr,  // chosen by rules only (measured on one machine)
              onOneNodeWithRoomForACard, true},
    OVERPASS_STAGED_PIPELINE(kReduce),
    // ---- allgather ----
    OVERPASS_PMPI(kAllgather),
    Algorithm{kAllgather, "ring", "p-1 steps around a ring, one block per step", allgatherRing,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * m.beta);
              }},
    Algorithm{kAllgather, "recursive_doubling",
              "log2(p) exchanges of doubling runs of blocks (power-of-two p; others run Bruck)",
              allgatherRecursiveDoubling,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * m.alpha + (pOf(c) - 1) * c.bytes * m.beta;
              },
              [](const CallShape& c) { return (c.teamSize & (c.teamSize - 1)) == 0; }},
    Algorithm{kAllgather, "bruck",
              "Bruck: ceil(log2(p)) steps sending min(2^k, p-2^k) blocks, any p", allgatherBruck,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * m.alpha + (pOf(c) - 1) * c.bytes * m.beta;
              }},
    Algorithm{kAllgather, "shm", "node shared memory: every rank copies in, every rank copies all out",
              allgatherShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes), 1.0 * c.bytes * (c.teamSize + 1));
              },
              onOneNode},
    // ---- reduce_scatter_block ----
    OVERPASS_PMPI(kReduceScatterBlock),
    Algorithm{kReduceScatterBlock, "ring",
              "p-1 steps around a ring, each reducing one block into the travelling partial sum",
              reduceScatterBlockRing,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * (m.beta + m.gamma));
              }},
    Algorithm{kReduceScatterBlock, "recursive_halving",
              "log2(p) halving exchanges of the remaining blocks; non-power-of-two ranks fold in",
              reduceScatterBlockRecursiveHalving,
              [](const CallShape& c, const CostModel& m) {
                const int p2 = floorPow2(c.teamSize);
                const double whole = pOf(c) * c.bytes;  // the p blocks of one rank's input
                const double fold =
                    p2 < c.teamSize ? 2 * m.alpha + whole * (m.beta + m.gamma) + c.bytes * m.beta
                                    : 0;
                return ceilLog2(p2) * m.alpha + (p2 - 1.0) / p2 * whole * (m.beta + m.gamma) + fold;
              }},
    Algorithm{kReduceScatterBlock, "rank_order",
              "one round: every block to its owner, combined there in rank order: deterministic "
              "mode",
              reduceScatterBlockRankOrder,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * (m.beta + m.gamma));
              },
              nullptr, true},
    Algorithm{kReduceScatterBlock, "shm",
              "node shared memory: every rank copies its p - 1 blocks for the others in and "
              "reduces its own block of all in rank order",
              reduceScatterBlockShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes * c.teamSize), c.bytes * (2 * pOf(c) - 1));
              },
              onOneNodeWithRoomForP, true},
    // ---- barrier ----
    OVERPASS_PMPI(kBarrier),
    Algorithm{
        kBarrier, "dissemination", "ceil(log2(p)) rounds of zero-byte messages",
        barrierDissemination,
        [](const CallShape& c, const CostModel& m) { return ceilLog2(c.teamSize) * m.alpha; }},
    Algorithm{kBarrier, "shm", "node shared memory: one round of flags", barrierShm,
              [](const CallShape&, const CostModel& m) { return shmCost(m, 1, 0); }, onOneNode},
    // ---- the vector collectives: only allgatherv's and reduce_scatter's sizes are known to
    // every rank (the mean block); alltoallv, gatherv and scatterv are selected on the team
    // size alone (their shapes have 0 bytes) ----
    OVERPASS_PMPI(kAllgatherv),
    Algorithm{kAllgatherv, "ring", "p-1 steps around a ring, one block per step, empty ones skipped",
              allgathervRing,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * m.beta);
              }},
    Algorithm{kAllgatherv, "bruck",
              "Bruck: ceil(log2(p)) steps of min(2^k, p-2^k) blocks through a rotated working copy",
              allgathervBruck,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * m.alpha + (pOf(c) - 1) * c.bytes * m.beta;
              }},
    Algorithm{kAllgatherv, "shm",
              "node shared memory: every rank copies its block in, every rank copies all out",
              allgathervShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes), 1.0 * c.bytes * (c.teamSize + 1));
              },
              onOneNode},
    OVERPASS_PMPI(kAlltoallv),
    Algorithm{kAlltoallv, "pairwise", "p-1 exchanges with r+s / r-s, empty blocks skipped",
              alltoallvPairwise,
              [](const CallShape& c, const CostModel& m) { return (pOf(c) - 1) * m.alpha; }},
    Algorithm{kAlltoallv, "linear",
              "every exchange posted up front, kAlltoallLinearBatch at a time, empty blocks skipped",
              alltoallvLinear,
              [](const CallShape& c, const CostModel& m) {
                return std::ceil((pOf(c) - 1) / kAlltoallLinearBatch) * m.alpha;
              }},
    Algorithm{kAlltoallv, "shm",
              "node shared memory: every rank copies its blocks in and the ones meant for it "
              "out, the first round also agreeing on the largest block; a block larger than a "
              "slot read from its sender's memory",
              alltoallvShm, [](const CallShape&, const CostModel& m) { return shmCost(m, 1, 0); },
              onOneNodeWithRoomForP},
    Algorithm{kAlltoallv, "hierarchical",
              "small blocks gathered in the node's shared memory and forwarded, one message per "
              "rank and node between nodes; large ones point to point",
              alltoallvHierarchical, nullptr,  // chosen by rules only, as the other hierarchical ones
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    OVERPASS_PMPI(kGatherv),
    Algorithm{kGatherv, "linear", "every rank sends its block to the root", gathervLinear,
              [](const CallShape& c, const CostModel& m) { return (pOf(c) - 1) * m.alpha; }},
    // Size-blind (the selector sees 0 bytes), the tree forwards blocks: chosen by rules only.
    Algorithm{kGatherv, "binomial",
              "binomial tree towards the root, each subtree's block sizes sent ahead of its blocks",
              gathervBinomial, nullptr},
    Algorithm{kGatherv, "hierarchical",
              "each node's rank on the root's rail gathers its node's sizes, then its blocks "
              "(shared memory, or linear), then the node buffers go to the root along the rail",
              gathervHierarchical, nullptr,  // chosen by rules only, as the hierarchical allreduce
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    Algorithm{kGatherv, "shm",
              "node shared memory: every rank copies its block in and the root copies all out, "
              "the first round also agreeing on the largest block",
              gathervShm, [](const CallShape&, const CostModel& m) { return shmCost(m, 1, 0); },
              onOneNode},
    OVERPASS_PMPI(kScatterv),
    Algorithm{kScatterv, "linear", "the root sends every rank its block", scattervLinear,
              [](const CallShape& c, const CostModel& m) { return (pOf(c) - 1) * m.alpha; }},
    // Size-blind (the selector sees 0 bytes), the tree forwards blocks: chosen by rules only.
    Algorithm{kScatterv, "binomial",
              "binomial tree from the root, each subtree's block sizes sent ahead of its blocks",
              scattervBinomial, nullptr},
    Algorithm{kScatterv, "hierarchical",
              "the root sends each node's rank on its rail the node's sizes and blocks, then that "
              "rank scatters within the node (shared memory, or linear)",
              scattervHierarchical, nullptr,  // chosen by rules only, as the hierarchical allreduce
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    Algorithm{kScatterv, "shm",
              "node shared memory: the root copies a chunk of every block in per round (the "
              "number of rounds in the first), every rank copies its own out",
              scattervShm, [](const CallShape&, const CostModel& m) { return shmCost(m, 1, 0); },
              onOneNodeWithRoomForP},
    OVERPASS_PMPI(kReduceScatter),
    Algorithm{kReduceScatter, "ring",
              "p-1 steps around a ring, each reducing one block into the travelling partial sum",
              reduceScatterRing,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * (m.beta + m.gamma));
              }},
    Algorithm{kReduceScatter, "rank_order",
              "one round: every block to its owner, combined there in rank order: deterministic "
              "mode",
              reduceScatterRankOrder,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (1.5 * m.alpha + c.bytes * (m.beta + m.gamma));
              },
              nullptr, true},
    Algorithm{kReduceScatter, "shm",
              "node shared memory: every rank copies its vector in, each folds its own block of "
              "all in rank order: deterministic mode",
              reduceScatterShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes * c.teamSize), 2.0 * c.bytes * c.teamSize);
              },
              onOneNode, true},
    Algorithm{kReduceScatter, "hierarchical",
              "the hierarchical allreduce of the whole vector, each rank keeping its block: small "
              "vectors over several nodes (one crossing)",
              reduceScatterHierarchical, nullptr,  // chosen by rules only
              [](const CallShape& c) { return c.nodes >= 2 && c.maxPerNode >= 2; }},
    OVERPASS_PMPI(kScan),
    Algorithm{kScan, "linear",
              "the prefix passed along the chain of ranks: rank order, deterministic mode",
              scanLinear,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * (m.beta + m.gamma));
              },
              nullptr, true},
    Algorithm{kScan, "recursive_doubling",
              "ceil(log2(p)) rounds, partials from r-2^k combined on the left",
              scanRecursiveDoubling,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * (m.alpha + c.bytes * (m.beta + m.gamma));
              }},
    Algorithm{kScan, "shm",
              "node shared memory: every rank copies its vector in, rank r folds those of ranks "
              "0..r in rank order: deterministic mode",
              scanShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes), c.bytes * (1.0 + c.teamSize / 2.0));
              },
              onOneNode, true},
    OVERPASS_PMPI(kExscan),
    Algorithm{kExscan, "linear",
              "the prefix passed along the chain of ranks: rank order, deterministic mode",
              exscanLinear,
              [](const CallShape& c, const CostModel& m) {
                return (pOf(c) - 1) * (m.alpha + c.bytes * (m.beta + m.gamma));
              },
              nullptr, true},
    Algorithm{kExscan, "recursive_doubling",
              "ceil(log2(p)) rounds, partials from r-2^k combined on the left",
              exscanRecursiveDoubling,
              [](const CallShape& c, const CostModel& m) {
                return ceilLog2(c.teamSize) * (m.alpha + c.bytes * (m.beta + m.gamma));
              }},
    Algorithm{kExscan, "shm",
              "node shared memory: every rank copies its vector in, rank r folds those of ranks "
              "0..r-1 in rank order: deterministic mode",
              exscanShm,
              [](const CallShape& c, const CostModel& m) {
                return shmCost(m, chunks(c, c.bytes), c.bytes * (1.0 + c.teamSize / 2.0));
              },
              onOneNode, true},
};
static_assert(kAlgorithms.size() <= kMaxAlgorithms);

#undef OVERPASS_PMPI
#undef OVERPASS_DEVICE_IPC

constexpr std::array<std::string_view, kAlgorithms.size()> makeNames() {
  std::array<std::string_view, kAlgorithms.size()> names{};
  for (std::size_t i = 0; i < kAlgorithms.size(); ++i) names[i] = kAlgorithms[i].name;
  return names;
}
constexpr auto kNames = makeNames();

}  // namespace

std::span<const Algorithm> algorithms() {
  return kAlgorithms;
}

std::size_t algorithmId(const Algorithm& a) {
  return &a - kAlgorithms.data();
}

const Algorithm* findAlgorithm(Collective coll, std::string_view name) {
  for (const Algorithm& a : kAlgorithms)
    if (a.coll == coll && a.name == name) return &a;
  return nullptr;
}

const Algorithm& pmpiAlgorithm(Collective coll) {
  return *findAlgorithm(coll, kPmpiName);
}

std::span<const std::string_view> algorithmNames() {
  return kNames;
}

}  // namespace overpass
