#include "common/log.h"

#include <unistd.h>

#include <array>
#include <cstdarg>
#include <cstdio>
#include <mutex>

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
  char line[2048];
  int n = std::snprintf(line, sizeof(line), "[overpass %d] %s: ", gRank.load(),
                        kLevelNames[static_cast<int>(level)].data());
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && n < static_cast<int>(sizeof(line)))
    n += std::vsnprintf(line + n, sizeof(line) - n, fmt, ap);
  va_end(ap);
  if (n >= static_cast<int>(sizeof(line)) - 1) n = sizeof(line) - 2;
  line[n++] = '\n';
  std::lock_guard lock(gMutex);
  FILE* out = gFile ? gFile : stderr;
  std::fwrite(line, 1, n, out);
  std::fflush(out);
}

}  // namespace overpass
