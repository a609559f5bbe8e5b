// Status codes returned by every layer below the shim. The shim turns a failure into an MPI error
// code raised through the communicator's error handler; the first function that detects an error
// logs it.
#pragma once

namespace overpass {

enum class Status : int {
  kOk = 0,
  kInvalidArgument,
  kNoMemory,
  kTransportError,
  kInternal,
  kDeclined,  // not an error: the ranks agreed that the algorithm cannot serve this call
};

constexpr const char* statusName(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kInvalidArgument:
      return "invalid argument";
    case Status::kNoMemory:
      return "out of memory";
    case Status::kTransportError:
      return "transport error";
    case Status::kInternal:
      return "internal error";
    case Status::kDeclined:
      return "declined";
  }
  return "unknown";
}

#define OVERPASS_CHECK(expr)                                          \
  do {                                                                \
    if (::overpass::Status s_ = (expr); s_ != Status::kOk) return s_; \
  } while (0)

}  // namespace overpass
