// Where Blob's math runs. "device_*" takes handles of the memory's bound device.
// "host_*" takes host pointers: when the bound device's memory is host memory (host,
// blis) its own kernels run on them directly (the pointer is a valid handle); otherwise
// the built-in host device's kernels do. One virtual call per operation, never per element.
#ifndef BLOBRT_BLOB_MATH_HPP
#define BLOBRT_BLOB_MATH_HPP

#include <cstdint>

#include "blobrt/runtime.hpp"
#include "blobrt/syncedmem.hpp"

namespace blobrt::blob_math {

inline Device& host_side(const SyncedMemory& mem) {
  const auto& device = mem.device();
  return device->description().host_memory ? *device : *host_device();
}

template <typename Dtype>
void host_axpy(const SyncedMemory& mem, std::int64_t n, Dtype alpha, const void* x, void* y) {
  host_side(mem).axpy(n, alpha, x, 0, y, 0);
}
template <typename Dtype>
void device_axpy(const SyncedMemory& mem, std::int64_t n, Dtype alpha, const void* x, void* y) {
  mem.device()->axpy(n, alpha, x, 0, y, 0);
}

template <typename Dtype>
Dtype host_asum(const SyncedMemory& mem, std::int64_t n, const void* x) {
  Dtype result = 0;
  host_side(mem).asum(n, x, 0, &result);
  return result;
}
template <typename Dtype>
Dtype device_asum(const SyncedMemory& mem, std::int64_t n, const void* x) {
  Dtype result = 0;
  mem.device()->asum(n, x, 0, &result);
  return result;
}

template <typename Dtype>
Dtype host_dot(const SyncedMemory& mem, std::int64_t n, const void* x, const void* y) {
  Dtype result = 0;
  host_side(mem).dot(n, x, 0, y, 0, &result);
  return result;
}
template <typename Dtype>
Dtype device_dot(const SyncedMemory& mem, std::int64_t n, const void* x, const void* y) {
  Dtype result = 0;
  mem.device()->dot(n, x, 0, y, 0, &result);
  return result;
}

template <typename Dtype>
void host_scal(const SyncedMemory& mem, std::int64_t n, Dtype alpha, void* x) {
  host_side(mem).scal(n, alpha, x, 0);
}
template <typename Dtype>
void device_scal(const SyncedMemory& mem, std::int64_t n, Dtype alpha, void* x) {
  mem.device()->scal(n, alpha, x, 0);
}

}  // namespace blobrt::blob_math

#endif
