// The simulated device (gpu/sim_device.h, gpu/sim_memory.cc) that the device-buffer tests run on
// without a GPU: its memory is recognised as device memory, reached only through the backend's
// copies, and a direct access crashes (so a test that touches it by mistake cannot pass).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/memory.h"
#include "gpu/sim_device.h"
#include "gpu/sim_memory.h"

namespace overpass {
namespace {

TEST(SimDevice, ClassifiesItsWindowAsDeviceMemoryAndCopiesThroughTheAlias) {
  DeviceMemory& sim = simulatedDeviceMemory();
  auto* device = static_cast<unsigned char*>(overpass_sim_device_alloc(10000));
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(sim.classify(device).kind, MemoryKind::kDevice);
  EXPECT_EQ(sim.classify(device + 9999).kind, MemoryKind::kDevice);
  std::vector<unsigned char> host(10000), back(10000);
  EXPECT_EQ(sim.classify(host.data()).kind, MemoryKind::kHost);
  EXPECT_TRUE(sim.classify(host.data()).hostAccessible());
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 13);
  ASSERT_EQ(sim.fromHost(device + 3, host.data(), 9000), Status::kOk);
  ASSERT_EQ(sim.toHost(back.data(), device + 3, 9000), Status::kOk);
  EXPECT_EQ(std::memcmp(back.data(), host.data(), 9000), 0);
  EXPECT_EQ(
      std::memcmp(static_cast<unsigned char*>(overpass_sim_alias(device)) + 3, host.data(), 9000),
      0);
}

TEST(SimDeviceDeathTest, DirectAccessCrashes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto* device = static_cast<volatile unsigned char*>(overpass_sim_device_alloc(64));
  ASSERT_NE(device, nullptr);
  EXPECT_DEATH(device[0] = 1, "");
}

TEST(DeviceMemory, NoBackendOnAMachineWithoutGpuUnlessSimulated) {
  // This test never initialises CUDA: no backend, every buffer is host memory (on a machine with
  // a driver too: the backend waits for the application to initialise CUDA).
  initDeviceMemory(false);
  EXPECT_EQ(deviceMemory(), nullptr);
  initDeviceMemory(true);
  ASSERT_NE(deviceMemory(), nullptr);
  EXPECT_EQ(deviceMemory()->name(), "simulated device");
  initDeviceMemory(false);
  EXPECT_EQ(deviceMemory(), nullptr);
}

}  // namespace
}  // namespace overpass

namespace overpass {
namespace {

// HostStaging keeps a slot until it must grow, and frees each allocation through the backend that
// made it (pinned memory must go back to the driver).
TEST(DeviceMemory, HostStagingGrowsKeepsAndFreesThroughItsOwner) {
  struct Counting final : public DeviceMemory {
    int allocations = 0, frees = 0;
    std::string_view name() const override { return "counting"; }
    PointerInfo classify(const void*) override { return {}; }
    Status startCopy(Lane, void*, const void*, std::size_t, Ticket*) override {
      return Status::kOk;
    }
    Status wait(const Ticket&) override { return Status::kOk; }
    void* allocateHost(std::size_t bytes) override {
      ++allocations;
      return DeviceMemory::allocateHost(bytes);
    }
    void freeHost(void* p) override {
      ++frees;
      DeviceMemory::freeHost(p);
    }
  } first, second;
  {
    HostStaging staging;
    void* a = staging.get(0, 100, first);
    EXPECT_EQ(staging.get(0, 50, second), a);  // big enough: kept, whoever asks
    staging.get(0, 1000, second);              // grows: freed by its owner, made by the asker
    staging.get(1, 10, first);
    EXPECT_EQ(first.allocations, 2);
    EXPECT_EQ(first.frees, 1);
    EXPECT_EQ(second.allocations, 1);
  }
  EXPECT_EQ(first.frees, 2);
  EXPECT_EQ(second.frees, 1);
}

}  // namespace
}  // namespace overpass
