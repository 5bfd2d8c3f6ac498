// A Device seen through a plugin's C function table. Turns each non-zero status into a
// blobrt::Error prefixed with the device id; keeps the shared object loaded while alive.
#ifndef BLOBRT_PLUGIN_DEVICE_HPP
#define BLOBRT_PLUGIN_DEVICE_HPP

#include <memory>

#include "blobrt/device.hpp"
#include "blobrt/plugin_abi.h"

namespace blobrt {

// `keep_alive` owns the loaded library (the table points into it).
std::shared_ptr<Device> open_plugin_device(std::shared_ptr<void> keep_alive,
                                           const blobrt_plugin_v1* table,
                                           const DeviceDescription& description, bool fork_safe);

}  // namespace blobrt

#endif
