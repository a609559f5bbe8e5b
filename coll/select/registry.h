// The registry of algorithms: one table of {collective, name, description, function} for every
// collective. An entry with no function stands for the MPI library's own implementation ("pmpi").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "coll/coll_args.h"
#include "coll/select/cost_model.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

using AlgorithmFn = Status (*)(const CollArgs& args, Team& team);

using CostFn = double (*)(const CallShape& call, const CostModel& model);  // seconds
using ServesFn = bool (*)(const CallShape& call);

// How the shim runs an algorithm (shim/dispatch.cc).
enum class AlgorithmKind : std::uint8_t {
  kPmpi,    // the MPI library's own implementation: no function here
  kHost,    // `run` on host bytes: packed data, device buffers staged through host copies
  kDevice,  // `run` on the application's device buffers (coll/device/device_ipc.h); it agrees with
            // the peers in its first round and may decline, alike on every rank
  kPipeline,  // the staging pipeline: the shim runs the call as a sequence of chunk calls,
              // copies to and from the device overlapping them (docs/GPU.md); no function here
};

struct Algorithm {
  Collective coll;
  std::string_view name;
  std::string_view description;
  AlgorithmFn run;  // kHost and kDevice only
  // Estimated time; nullptr: never chosen by the cost model (only by a rule).
  CostFn cost = nullptr;
  // Whether the algorithm serves a call: false where it cannot, or where it would degrade (e.g.
  // a ring over fewer elements than ranks). nullptr: every call.
  ServesFn serves = nullptr;
  // Combines every element in rank order, ((x0 op x1) op x2) ..., with the running result as
  // MPI_Reduce_local's `in` operand: the only algorithms deterministic mode uses for
  // order-sensitive reductions, and all of them give the same bits.
  bool rankOrder = false;
  AlgorithmKind kind = AlgorithmKind::kHost;

  bool isPmpi() const { return kind == AlgorithmKind::kPmpi; }
  // pmpi serves everything: naming it is the user's explicit choice of the MPI library, whose
  // own order then applies also in deterministic mode.
  bool canServe(const CallShape& call) const {
    return isPmpi() || ((!call.ordered || rankOrder) && (serves == nullptr || serves(call)));
  }
};

inline constexpr std::string_view kPmpiName = "pmpi";
inline constexpr std::string_view kDeviceIpcName = "device_ipc";
inline constexpr std::string_view kStagedPipelineName = "staged_pipeline";

std::span<const Algorithm> algorithms();
// Position of `a` in algorithms(): the id used by statistics.
std::size_t algorithmId(const Algorithm& a);
const Algorithm* findAlgorithm(Collective coll, std::string_view name);
const Algorithm& pmpiAlgorithm(Collective coll);
// Names by id, for statistics reports.
std::span<const std::string_view> algorithmNames();

}  // namespace overpass
