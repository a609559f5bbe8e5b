// Logging: rank-prefixed lines to stderr or to OVERPASS_LOG_FILE, filtered by OVERPASS_LOG.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace overpass {

enum class LogLevel : int { kError = 0, kWarn, kInfo, kDebug, kTrace };

std::optional<LogLevel> logLevelFromName(std::string_view name);
std::string_view logLevelName(LogLevel level);

namespace log_detail {
extern std::atomic<int> gLevel;
}

inline bool logEnabled(LogLevel level) {
  return static_cast<int>(level) <= log_detail::gLevel.load(std::memory_order_relaxed);
}

// Sets the level, the destination ("" for stderr; "%r" in a path becomes the rank) and the rank
// shown in the prefix (-1 before it is known).
void logConfigure(LogLevel level, const std::string& file, int rank);
void logClose();

// Writes one line. A line longer than kMaxLogLine is cut there and says so, with its length.
void logWrite(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline constexpr std::size_t kMaxLogLine = 16384;

// A value as messages show it: control characters as \xNN, and beyond `keep` characters cut to
// the first `keep` followed by "... (N characters)", so that what comes after it (the rest of the
// message) is never lost.
std::string shortened(std::string_view value, std::size_t keep = 200);

}  // namespace overpass

#define OVERPASS_LOG_AT(level, ...)                                              \
  do {                                                                           \
    if (::overpass::logEnabled(level)) ::overpass::logWrite(level, __VA_ARGS__); \
  } while (0)
#define OVERPASS_ERROR(...) OVERPASS_LOG_AT(::overpass::LogLevel::kError, __VA_ARGS__)
#define OVERPASS_WARN(...) OVERPASS_LOG_AT(::overpass::LogLevel::kWarn, __VA_ARGS__)
#define OVERPASS_INFO(...) OVERPASS_LOG_AT(::overpass::LogLevel::kInfo, __VA_ARGS__)
#define OVERPASS_DEBUG(...) OVERPASS_LOG_AT(::overpass::LogLevel::kDebug, __VA_ARGS__)
#define OVERPASS_TRACE(...) OVERPASS_LOG_AT(::overpass::LogLevel::kTrace, __VA_ARGS__)
