// Which device memory/ binds to, without memory/ knowing who decides it. The runtime
// (core/src/runtime.cpp, the layer above) installs its answers once, while libblobrt is
// loaded; SyncedMemory and Blob's math (core/src/memory/) ask here. So the memory layer
// depends on the device layer only (docs/architecture.md, "Layers").
#ifndef BLOBRT_DEVICE_SOURCE_HPP
#define BLOBRT_DEVICE_SOURCE_HPP

#include <memory>

#include "blobrt/device.hpp"

namespace blobrt::device_source {

using DeviceGetter = const std::shared_ptr<Device>& (*)();

struct Sources {
  DeviceGetter current = nullptr;  // the calling thread's current device (may select the default)
  DeviceGetter host = nullptr;     // the built-in host device
};

// Installed by the runtime; both must be set (blobrt::Error otherwise).
void install(const Sources& sources);

// The calling thread's current device / the built-in host device, from what was installed.
// blobrt::Error if nothing is installed yet.
const std::shared_ptr<Device>& current();
const std::shared_ptr<Device>& host();

}  // namespace blobrt::device_source

#endif
