// The built-in "host" device: plain host memory and the kernels of blobrt_kernels/level1.hpp.
// Always present, needs nothing outside libblobrt; the default when no plugin is usable.
#ifndef BLOBRT_HOST_DEVICE_HPP
#define BLOBRT_HOST_DEVICE_HPP

#include <memory>

#include "blobrt/device.hpp"

namespace blobrt {

std::shared_ptr<Device> make_host_device();

}  // namespace blobrt

#endif
