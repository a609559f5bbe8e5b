// The simulated device backend (gpu/sim_device.h): its two copy lanes are worker threads that
// copy through the alias window, in order, each copy optionally slowed down (a stand-in for
// PCIe, set by the tests through gpu/sim_test_hooks.h, which only tests include).
#pragma once

#include "gpu/memory.h"

namespace overpass {

DeviceMemory& simulatedDeviceMemory();

}  // namespace overpass
