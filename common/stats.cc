#include "common/stats.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace overpass {
namespace {

constexpr std::size_t kPerCollective = 4 + kMaxAlgorithms + kNumFallbackReasons;

struct View {
  const StatsReport& r;
  std::uint64_t at(std::size_t coll, std::size_t i) const {
    return r.counters[coll * kPerCollective + i];
  }
  std::uint64_t calls(std::size_t c) const { return at(c, 0); }
  std::uint64_t bytes(std::size_t c) const { return at(c, 1); }
  std::uint64_t device(std::size_t c) const { return at(c, 2); }
  std::uint64_t fused(std::size_t c) const { return at(c, 3); }
  std::uint64_t algorithm(std::size_t c, std::size_t a) const { return at(c, 4 + a); }
  std::uint64_t fallback(std::size_t c, std::size_t f) const {
    return at(c, 4 + kMaxAlgorithms + f);
  }
  std::uint64_t fallbacks(std::size_t c) const {
    std::uint64_t n = 0;
    for (std::size_t f = 0; f < kNumFallbackReasons; ++f) n += fallback(c, f);
    return n;
  }
};

std::string humanBytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

}  // namespace

std::string statsRowName(std::size_t row) {
  const std::string name(kCollectiveNames[row % kNumCollectives]);
  return row < kNumCollectives ? name : "i" + name;
}

void Stats::record(StatsRow row, std::uint64_t bytes, std::size_t algorithm, std::uint64_t ns) {
  PerCollective& c = colls_[row.index];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.bytes.fetch_add(bytes, std::memory_order_relaxed);
  c.ns.fetch_add(ns, std::memory_order_relaxed);
  if (algorithm < kMaxAlgorithms) c.algorithms[algorithm].fetch_add(1, std::memory_order_relaxed);
}

void Stats::recordFallback(StatsRow row, FallbackReason reason) {
  colls_[row.index].fallbacks[static_cast<std::size_t>(reason)].fetch_add(
      1, std::memory_order_relaxed);
}

void Stats::recordDevice(StatsRow row) {
  colls_[row.index].device.fetch_add(1, std::memory_order_relaxed);
}

void Stats::recordFused(StatsRow row) {
  colls_[row.index].fused.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Stats::counters() const {
  std::vector<std::uint64_t> out;
  out.reserve(kNumStatsRows * kPerCollective);
  for (const PerCollective& c : colls_) {
    out.push_back(c.calls.load());
    out.push_back(c.bytes.load());
    out.push_back(c.device.load());
    out.push_back(c.fused.load());
    for (const auto& a : c.algorithms) out.push_back(a.load());
    for (const auto& f : c.fallbacks) out.push_back(f.load());
  }
  return out;
}

std::vector<double> Stats::times() const {
  std::vector<double> out;
  for (const PerCollective& c : colls_) out.push_back(static_cast<double>(c.ns.load()));
  return out;
}

std::string formatStatsTable(const StatsReport& report) {
  const View v{report};
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line),
                "overpass statistics over %d rank(s); time is each rank's total in the "
                "collective, min/avg/max over ranks\n",
                report.ranks);
  out += line;
  std::snprintf(line, sizeof(line), "%-21s %10s %11s %10s %10s %10s %9s %9s  %s\n", "collective",
                "calls", "bytes", "min ms", "avg ms", "max ms", "fallbacks", "on device",
                "algorithms");
  out += line;
  for (std::size_t c = 0; c < kNumStatsRows; ++c) {
    if (v.calls(c) == 0) continue;
    std::string algorithms, reasons;
    for (std::size_t a = 0; a < kMaxAlgorithms && a < report.algorithmNames.size(); ++a)
      if (v.algorithm(c, a))
        algorithms += std::string(algorithms.empty() ? "" : ", ") +
                      std::string(report.algorithmNames[a]) + "=" +
                      std::to_string(v.algorithm(c, a));
    for (std::size_t f = 0; f < kNumFallbackReasons; ++f)
      if (v.fallback(c, f))
        reasons += std::string(reasons.empty() ? " (" : ", ") +
                   std::string(kFallbackReasonNames[f]) + "=" + std::to_string(v.fallback(c, f));
    if (!reasons.empty()) reasons += ")";
    if (v.fused(c)) reasons += "; fused=" + std::to_string(v.fused(c));
    std::snprintf(line, sizeof(line), "%-21s %10llu %11s %10.3f %10.3f %10.3f %9llu %9llu  %s%s\n",
                  statsRowName(c).c_str(), static_cast<unsigned long long>(v.calls(c)),
                  humanBytes(v.bytes(c)).c_str(), report.timeMin[c] / 1e6,
                  report.timeSum[c] / report.ranks / 1e6, report.timeMax[c] / 1e6,
                  static_cast<unsigned long long>(v.fallbacks(c)),
                  static_cast<unsigned long long>(v.device(c)), algorithms.c_str(),
                  reasons.c_str());
    out += line;
  }
  return out;
}

std::string formatStatsJson(const StatsReport& report) {
  const View v{report};
  nlohmann::ordered_json collectives = nlohmann::ordered_json::object();
  for (std::size_t c = 0; c < kNumStatsRows; ++c) {
    if (v.calls(c) == 0) continue;
    nlohmann::ordered_json algorithms = nlohmann::ordered_json::object();
    nlohmann::ordered_json reasons = nlohmann::ordered_json::object();
    for (std::size_t a = 0; a < kMaxAlgorithms && a < report.algorithmNames.size(); ++a)
      if (v.algorithm(c, a)) algorithms[std::string(report.algorithmNames[a])] = v.algorithm(c, a);
    for (std::size_t f = 0; f < kNumFallbackReasons; ++f)
      if (v.fallback(c, f)) reasons[std::string(kFallbackReasonNames[f])] = v.fallback(c, f);
    collectives[statsRowName(c)] = {
        {"calls", v.calls(c)},
        {"bytes", v.bytes(c)},
        {"fallbacks", v.fallbacks(c)},
        {"device_calls", v.device(c)},
        {"fused_calls", v.fused(c)},
        {"algorithms", algorithms},
        {"fallback_reasons", reasons},
        {"time_us",
         {{"min", report.timeMin[c] / 1e3},
          {"avg", report.timeSum[c] / report.ranks / 1e3},
          {"max", report.timeMax[c] / 1e3}}},
    };
  }
  nlohmann::ordered_json root = {{"ranks", report.ranks}, {"collectives", collectives}};
  return root.dump(2) + "\n";
}

}  // namespace overpass
