// The built-in "host" device: the plugin kit's host-memory device (blobrt/plugin_kit_host.hpp:
// host memory, blobrt's kernels) as a Device. Always present, needs nothing outside
// libblobrt; the default when no plugin is usable.
#ifndef BLOBRT_HOST_DEVICE_HPP
#define BLOBRT_HOST_DEVICE_HPP

#include <memory>

#include "blobrt/device.hpp"

namespace blobrt {

std::shared_ptr<Device> make_host_device();

}  // namespace blobrt

#endif
