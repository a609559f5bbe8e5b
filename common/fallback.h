// Every reason a call is handed to the MPI library underneath instead of an Overpass algorithm.
// Each reason depends only on facts all ranks of the communicator share (rule 2 of DESIGN.md),
// except kReentry and kNotInitialized, which hold on every rank alike.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace overpass {

#define OVERPASS_FALLBACK_REASONS(X)                                                           \
  X(kNotInitialized, "not_initialized", "MPI was not initialised through Overpass's wrappers") \
  X(kDisabled, "disabled", "OVERPASS_DISABLE is set")                                          \
  X(kExcluded, "excluded", "the collective is excluded by OVERPASS_COLLS")                     \
  X(kReentry, "reentry", "called from inside Overpass")                                        \
  X(kInvalidArgument, "invalid_argument",                                                      \
    "an argument is invalid; the MPI library reports the error")                               \
  X(kIntercommunicator, "intercommunicator", "intercommunicators are not handled")             \
  X(kWarmingUp, "warming_up",                                                                  \
    "one of the first calls on a new communicator (OVERPASS_COMM_WARMUP), before Overpass "    \
    "sets it up")                                                                              \
  X(kNotSetUp, "not_set_up",                                                                   \
    "a nonblocking call on a communicator Overpass has not set up yet (the set-up is "         \
    "collective and blocking: the first blocking call after the warm-up does it)")             \
  X(kNoProgressHook, "no_progress_hook",                                                       \
    "a nonblocking call where Overpass cannot hook into the MPI library's progress engine")    \
  X(kNonblockingUserOp, "nonblocking_user_op",                                                 \
    "a nonblocking reduction with a user-defined operation: the program may free it before "   \
    "the call completes, and it runs on the program's own stack")                              \
  X(kNonCommutativeOp, "non_commutative_op",                                                   \
    "user-defined non-commutative operation: its order is preserved by the MPI library")       \
  X(kUnsupportedReduction, "unsupported_reduction",                                            \
    "the datatype is not a predefined type valid for the predefined operation")                \
  X(kDerivedTypeUserOp, "derived_type_user_op",                                                \
    "user-defined operation on a non-contiguous datatype")                                     \
  X(kSelected, "selected", "the selector chose the MPI library's own algorithm")               \
  X(kDeclined, "declined",                                                                     \
    "the selected algorithm declined the call (a precondition checked on the call itself, "    \
    "alike on every rank)")

enum class FallbackReason : int {
#define OVERPASS_X(id, name, help) id,
  OVERPASS_FALLBACK_REASONS(OVERPASS_X)
#undef OVERPASS_X
      kCount
};

inline constexpr std::size_t kNumFallbackReasons = static_cast<std::size_t>(FallbackReason::kCount);

inline constexpr std::array<std::string_view, kNumFallbackReasons> kFallbackReasonNames = {
#define OVERPASS_X(id, name, help) name,
    OVERPASS_FALLBACK_REASONS(OVERPASS_X)
#undef OVERPASS_X
};

inline constexpr std::array<std::string_view, kNumFallbackReasons> kFallbackReasonHelp = {
#define OVERPASS_X(id, name, help) help,
    OVERPASS_FALLBACK_REASONS(OVERPASS_X)
#undef OVERPASS_X
};

constexpr std::string_view fallbackReasonName(FallbackReason r) {
  return kFallbackReasonNames[static_cast<std::size_t>(r)];
}

}  // namespace overpass
