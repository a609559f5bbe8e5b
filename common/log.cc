#include "common/log.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

namespace overpass {
namespace log_detail {
std::atomic<int> gLevel{static_cast<int>(LogLevel::kWarn)};
}

namespace {

constexpr std::array<std::string_view, 5> kLevelNames = {"error", "warn", "info", "debug", "trace"};
std::mutex gMutex;
FILE* gFile = nullptr;  // nullptr: stderr
std::atomic<int> gRank{-1};

}  // namespace

std::optional<LogLevel> logLevelFromName(std::string_view name) {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i)
    if (kLevelNames[i] == name) return static_cast<LogLevel>(i);
  return std::nullopt;
}

std::string_view logLevelName(LogLevel level) {
  return kLevelNames[static_cast<int>(level)];
}

void logConfigure(LogLevel level, const std::string& file, int rank) {
  std::lock_guard lock(gMutex);
  log_detail::gLevel.store(static_cast<int>(level), std::memory_order_relaxed);
  gRank = rank;
  if (gFile) {
    std::fclose(gFile);
    gFile = nullptr;
  }
  if (file.empty()) return;
  std::string path;
  for (std::size_t i = 0; i < file.size(); ++i) {
    if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'r') {
      path += std::to_string(rank);
      ++i;
    } else {
      path += file[i];
    }
  }
  gFile = std::fopen(path.c_str(), "a");
  if (!gFile)
    std::fprintf(stderr,
                 "[overpass %d] warn: cannot open OVERPASS_LOG_FILE '%s'; logging to stderr\n",
                 rank, path.c_str());
}

void logClose() {
  std::lock_guard lock(gMutex);
  if (gFile) std::fclose(gFile);
  gFile = nullptr;
}

void logWrite(LogLevel level, const char* fmt, ...) {
  char prefix[64];
  const int p = std::snprintf(prefix, sizeof(prefix), "[overpass %d] %s: ", gRank.load(),
                              kLevelNames[static_cast<int>(level)].data());
  std::string line(prefix, p > 0 ? std::min<std::size_t>(p, sizeof(prefix) - 1) : 0);
  char text[2048];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int n = std::vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (n < 0) {
    line += "(unprintable log message)";
  } else if (static_cast<std::size_t>(n) < sizeof(text)) {
    line.append(text, n);
  } else {  // longer than the stack buffer: format it whole, then cut it if it is too long
    std::string whole(static_cast<std::size_t>(n) + 1, '\0');
    std::vsnprintf(whole.data(), whole.size(), fmt, again);
    whole.resize(n);
    if (line.size() + whole.size() > kMaxLogLine) {
      whole.resize(kMaxLogLine - line.size());
      whole += "... (line cut, " + std::to_string(n) + " characters)";
    }
    line += whole;
  }
  va_end(again);
  line += '\n';
  std::lock_guard lock(gMutex);
  FILE* out = gFile ? gFile : stderr;
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

std::string shortened(std::string_view value, std::size_t keep) {
  std::string out;
  const std::size_t shown = std::min(value.size(), keep);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < value.size()) out += "... (" + std::to_string(value.size()) + " characters)";
  return out;
}

}  // namespace overpass
