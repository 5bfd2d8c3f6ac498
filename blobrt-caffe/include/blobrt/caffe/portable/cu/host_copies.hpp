// Host copies of GPU operands for the portable forms of a tree's CUDA code that blobrt's
// operations do not cover (the n-d im2col, SSD's bbox_util.cu): what Caffe hands over as
// device memory read into a std::vector on the host, and a result written back, on the
// calling thread's device. Each copy is counted by blobrt's transfer counters as any other.
#ifndef BLOBRT_CAFFE_PORTABLE_CU_HOST_COPIES_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_HOST_COPIES_HPP

#include <cstddef>
#include <vector>

#include <blobrt/runtime.hpp>

namespace blobrt_caffe_portable {

// The first n elements of device memory `device_data`, on the host.
template <typename T>
std::vector<T> to_host(const T* device_data, std::size_t n) {
  std::vector<T> host(n);
  if (n > 0) blobrt::current_device()->copy_to_host(device_data, 0, host.data(), n * sizeof(T));
  return host;
}

// `host` written to device memory `device_data`.
template <typename T>
void to_device(const std::vector<T>& host, T* device_data) {
  if (!host.empty()) blobrt::current_device()->copy_to_device(host.data(), device_data, 0, host.size() * sizeof(T));
}

}  // namespace blobrt_caffe_portable

#endif  // BLOBRT_CAFFE_PORTABLE_CU_HOST_COPIES_HPP
