// gpu/staging_pipeline.h on the simulated device (gpu/sim_memory.h: copy lanes are worker
// threads): results for every placement of the buffers, depth and chunk size; the order in which
// the pipeline issues copies, waits and steps (recorded by a decorator around the simulated
// backend); and, with slowed copies, that the copies of neighbouring chunks really run during a
// step.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu/sim_device.h"
#include "gpu/sim_memory.h"
#include "gpu/sim_test_hooks.h"
#include "gpu/staging_pipeline.h"

namespace overpass {
namespace {

using Clock = std::chrono::steady_clock;

unsigned char* deviceBuffer(std::size_t bytes) {
  auto* p = static_cast<unsigned char*>(overpass_sim_device_alloc(bytes));
  EXPECT_NE(p, nullptr);
  return p;
}
unsigned char* alias(void* device) {
  return static_cast<unsigned char*>(overpass_sim_alias(device));
}

enum class Placement {
  kDeviceToDevice,
  kDeviceToHost,
  kHostToDevice,
  kInPlace,
  kNoInput,
  kNoOutput
};

TEST(SimPipeline, ResultsForEveryPlacementDepthAndChunk) {
  DeviceMemory& sim = simulatedDeviceMemory();
  for (Placement placement :
       {Placement::kDeviceToDevice, Placement::kDeviceToHost, Placement::kHostToDevice,
        Placement::kInPlace, Placement::kNoInput, Placement::kNoOutput})
    for (std::size_t bytes : {0ul, 1ul, 1000ul, 4096ul * 7 + 3})
      for (std::size_t chunk : {64ul, 1000ul, 4096ul})
        for (int depth : {2, 3, 4}) {
          std::vector<unsigned char> source(bytes), hostIn(bytes), hostOut(bytes, 0xEE);
          for (std::size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>(i * 7 + 1);
          unsigned char* devIn = deviceBuffer(bytes);
          unsigned char* devOut = deviceBuffer(bytes);
          std::copy(source.begin(), source.end(), alias(devIn));
          std::memset(alias(devOut), 0xEE, bytes);
          hostIn = source;
          const void* in = nullptr;
          void* out = nullptr;
          switch (placement) {
            case Placement::kDeviceToDevice:
              in = devIn, out = devOut;
              break;
            case Placement::kDeviceToHost:
              in = devIn, out = hostOut.data();
              break;
            case Placement::kHostToDevice:
              in = hostIn.data(), out = devOut;
              break;
            case Placement::kInPlace:
              in = out = devIn;
              break;
            case Placement::kNoInput:
              out = devOut;
              break;
            case Placement::kNoOutput:
              in = devIn;
              break;
          }
          std::vector<unsigned char> seen(bytes);  // what the steps read, for kNoOutput
          const PipelinePlan plan{bytes, chunk, depth};
          std::vector<unsigned char> staging(pipelineStagingBytes(plan));
          ASSERT_EQ(runPipelined(
                        sim, in, onDevice(sim, in), out, onDevice(sim, out), plan, staging.data(),
                        [&](std::size_t offset, std::size_t n, const void* hin, void* hout) {
                          const auto* a = static_cast<const unsigned char*>(hin);
                          auto* b = static_cast<unsigned char*>(hout);
                          for (std::size_t i = 0; i < n; ++i) {
                            const unsigned char x =
                                a ? a[i] : static_cast<unsigned char>(offset + i);
                            seen[offset + i] = x;
                            if (b) b[i] = x ^ 0x5a;
                          }
                          return Status::kOk;
                        }),
                    Status::kOk);
          std::vector<unsigned char> expected(bytes);
          for (std::size_t i = 0; i < bytes; ++i)
            expected[i] =
                (placement == Placement::kNoInput ? static_cast<unsigned char>(i) : source[i]) ^
                0x5a;
          const unsigned char* result = nullptr;
          switch (placement) {
            case Placement::kDeviceToHost:
              result = hostOut.data();
              break;
            case Placement::kInPlace:
              result = alias(devIn);
              break;
            case Placement::kNoOutput:
              break;
            default:
              result = alias(devOut);
          }
          const std::string where = "placement " + std::to_string(static_cast<int>(placement)) +
                                    " bytes " + std::to_string(bytes) + " chunk " +
                                    std::to_string(chunk) + " depth " + std::to_string(depth);
          if (result)
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), result)) << where;
          else
            EXPECT_EQ(seen, source) << where;
        }
}

// Records, in program order, what the pipeline asks of the backend and when its steps run.
class Recorder final : public DeviceMemory {
 public:
  explicit Recorder(DeviceMemory& inner) : inner_(inner) {}
  std::string_view name() const override { return "recorder"; }
  PointerInfo classify(const void* p) override { return inner_.classify(p); }
  // Copies are numbered per lane from 1 (chunk k's copies are number k).
  Status startCopy(Lane lane, void* dst, const void* src, std::size_t bytes,
                   Ticket* ticket) override {
    const Status s = inner_.startCopy(lane, dst, src, bytes, ticket);
    number_[lane].push_back(ticket->seq);
    log.push_back((lane == kUp ? "up " : "down ") + std::to_string(number_[lane].size()));
    return s;
  }
  Status wait(const Ticket& ticket) override {
    if (ticket.lane >= 0) {
      const auto& seqs = number_[ticket.lane];
      const auto k = std::find(seqs.begin(), seqs.end(), ticket.seq) - seqs.begin() + 1;
      log.push_back((ticket.lane == kUp ? "wait up " : "wait down ") + std::to_string(k));
    }
    return inner_.wait(ticket);
  }
  std::size_t at(const std::string& event) const {
    return std::find(log.begin(), log.end(), event) - log.begin();
  }
  std::vector<std::string> log;

 private:
  DeviceMemory& inner_;
  std::vector<std::uint64_t> number_[2];
};

// In place, depth 3, 6 chunks: copy k + 1 up before step k, step k only after copy k is up, copy
// k down right after step k, and reuse a slot for copy k + 1 up only once chunk k - 2 (its last
// user) is back down.
TEST(SimPipeline, IssuesCopiesAheadAndReusesASlotOnlyWhenItsCopyIsDone) {
  Recorder recorder(simulatedDeviceMemory());
  const std::size_t chunk = 256, chunks = 6;
  unsigned char* buf = deviceBuffer(chunk * chunks);
  const PipelinePlan plan{chunk * chunks, chunk, 3};
  std::vector<unsigned char> staging(pipelineStagingBytes(plan));
  ASSERT_EQ(runPipelined(recorder, buf, onDevice(recorder, buf), buf, onDevice(recorder, buf), plan,
                         staging.data(),
                         [&](std::size_t offset, std::size_t, const void*, void*) {
                           recorder.log.push_back("step " + std::to_string(offset / chunk + 1));
                           return Status::kOk;
                         }),
            Status::kOk);
  const Recorder& r = recorder;
  for (std::size_t k = 1; k <= chunks; ++k) {  // copies are numbered from 1, as the lanes do
    const std::string n = std::to_string(k);
    EXPECT_LT(r.at("up " + n), r.at("step " + n)) << k;
    EXPECT_LT(r.at("wait up " + n), r.at("step " + n)) << k;
    if (k < chunks) {
      EXPECT_LT(r.at("up " + std::to_string(k + 1)), r.at("step " + n)) << k;
    }
    EXPECT_EQ(r.at("down " + n), r.at("step " + n) + 1) << k;
    if (k + 1 > 3 && k < chunks) {  // chunk k + 1 reuses the slot of chunk k + 1 - 3
      EXPECT_LT(r.at("wait down " + std::to_string(k + 1 - 3)), r.at("up " + std::to_string(k + 1)))
          << k;
    }
  }
}

// With copies slowed to 30 ms and steps of 30 ms, each middle step runs while the next chunk is
// copied up and the previous one copied down (the copies' intervals overlap the step's). The
// intervals start within microseconds of each other, so a copy lane woken 30 ms late on a loaded
// machine (it happened in CI) shows none: up to three attempts, one with every overlap suffices;
// a pipeline that ran its copies and steps one after another would show none in any.
// Returns, for each middle step k (1 <= k < chunks - 1), each neighbouring copy it did not
// overlap: empty where every step overlapped both.
std::vector<std::string> missingOverlaps() {
  DeviceMemory& sim = simulatedDeviceMemory();
  const auto delay = std::chrono::milliseconds(30);
  simSetCopyDelay(delay);
  simTakeTrace();
  const std::size_t chunk = 4096, chunks = 4;
  unsigned char* in = deviceBuffer(chunk * chunks);
  unsigned char* out = deviceBuffer(chunk * chunks);
  const PipelinePlan plan{chunk * chunks, chunk, 3};
  std::vector<unsigned char> staging(pipelineStagingBytes(plan));
  std::vector<std::pair<Clock::time_point, Clock::time_point>> steps;
  const Status status =
      runPipelined(sim, in, onDevice(sim, in), out, onDevice(sim, out), plan, staging.data(),
                   [&](std::size_t, std::size_t n, const void* a, void* b) {
                     const auto start = Clock::now();
                     std::memcpy(b, a, n);
                     std::this_thread::sleep_for(delay);
                     steps.emplace_back(start, Clock::now());
                     return Status::kOk;
                   });
  simSetCopyDelay(std::chrono::microseconds(0));
  const std::vector<SimCopyRecord> trace = simTakeTrace();
  if (status != Status::kOk || steps.size() != chunks) return {"the pipeline failed"};
  auto copy = [&](int lane, std::size_t chunkIndex) {  // the chunkIndex-th copy on the lane
    std::vector<SimCopyRecord> onLane;
    for (const SimCopyRecord& c : trace)
      if (c.lane == lane) onLane.push_back(c);
    std::sort(onLane.begin(), onLane.end(),
              [](const SimCopyRecord& a, const SimCopyRecord& b) { return a.seq < b.seq; });
    return onLane.at(chunkIndex);
  };
  auto overlaps = [](auto aStart, auto aEnd, auto bStart, auto bEnd) {
    return aStart < bEnd && bStart < aEnd;
  };
  std::vector<std::string> missing;
  for (std::size_t k = 1; k + 1 < chunks; ++k) {
    const SimCopyRecord next = copy(DeviceMemory::kUp, k + 1),
                        previous = copy(DeviceMemory::kDown, k - 1);
    if (!overlaps(steps[k].first, steps[k].second, next.start, next.end))
      missing.push_back("step " + std::to_string(k) + ": the next chunk's copy up");
    if (!overlaps(steps[k].first, steps[k].second, previous.start, previous.end))
      missing.push_back("step " + std::to_string(k) + ": the previous chunk's copy down");
  }
  return missing;
}

TEST(SimPipeline, CopiesOfNeighbouringChunksRunDuringAStep) {
  std::vector<std::string> missing;
  for (int attempt = 0; attempt < 3; ++attempt) {
    missing = missingOverlaps();
    if (missing.empty()) break;
  }
  for (const std::string& m : missing) ADD_FAILURE() << "no overlap in three attempts, " << m;
}

}  // namespace
}  // namespace overpass
