// blobrt::host_math_device() for the Caffe headers while runtime.hpp may not declare it
// yet: a template of the same name, which loses to runtime.hpp's non-template function
// wherever that one is declared (the best device whose handles are host pointers), and
// otherwise answers with the built-in host device.
#ifndef BLOBRT_CAFFE_HOST_MATH_DEVICE_HPP
#define BLOBRT_CAFFE_HOST_MATH_DEVICE_HPP

#include <memory>

#include "blobrt/device.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt {

template <int = 0>
std::shared_ptr<Device> host_math_device() {
  return host_device();
}

}  // namespace blobrt

#endif  // BLOBRT_CAFFE_HOST_MATH_DEVICE_HPP
