// Host copies of GPU operands for the portable forms of a tree's CUDA code that blobrt's
// operations do not cover (the n-d im2col, SSD's bbox_util.cu): what Caffe hands over as
// device memory read into a std::vector on the host, and a result written back, on the
// calling thread's device. These are Device copies, not SyncedMemory's: blobrt's transfer
// counters (which count SyncedMemory's) do not see them.
// The copies go as caffe_gpu_memcpy's (CUDA's cudaMemcpyDefault): a pointer that is none of
// the device's buffers is host memory, as CUDA's unified addressing lets Caffe's GPU code
// read Caffe's pinned host memory (SSD's tests hand cpu_data() to its GPU functions).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_HOST_COPIES_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_HOST_COPIES_HPP

#include <cstddef>
#include <vector>

#include <blobrt/caffe/math_functions.hpp>

namespace blobrt_caffe_portable {

// The first n elements of device memory `device_data`, on the host.
template <typename T>
std::vector<T> to_host(const T* device_data, std::size_t n) {
  std::vector<T> host(n);
  caffe::caffe_gpu_memcpy(n * sizeof(T), device_data, host.data());
  return host;
}

// `host` written to device memory `device_data`.
template <typename T>
void to_device(const std::vector<T>& host, T* device_data) {
  caffe::caffe_gpu_memcpy(host.size() * sizeof(T), host.data(), device_data);
}

}  // namespace blobrt_caffe_portable

#endif  // BLOBRT_CAFFE_PORTABLE_CU_HOST_COPIES_HPP
