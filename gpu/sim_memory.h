// The simulated device backend (gpu/sim_device.h): copies through the alias window.
#pragma once

#include "gpu/memory.h"

namespace overpass {

DeviceMemory& simulatedDeviceMemory();

}  // namespace overpass
