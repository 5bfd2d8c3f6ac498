// Where Blob's math runs: on the memory's bound device for device handles; on host
// pointers, through that device's own kernels when its memory is host memory (host,
// blis: the pointer is a valid handle), else the built-in host device's. One virtual call
// per operation, never one per element.
#ifndef BLOBRT_BLOB_MATH_HPP
#define BLOBRT_BLOB_MATH_HPP

#include "blobrt/runtime.hpp"
#include "blobrt/syncedmem.hpp"

namespace blobrt::blob_math {

// Caffe's rule: the math goes to the device when the head is there or synced.
inline bool on_device(const SyncedMemory& mem) {
  return mem.head() == SyncedMemory::HEAD_AT_GPU || mem.head() == SyncedMemory::SYNCED;
}

// The device that runs math on `mem`'s side: its own device for device handles; for host
// pointers, that device when its memory is host memory, else the built-in host device.
inline Device& math_device(const SyncedMemory& mem, bool device_side) {
  const auto& device = mem.device();
  return device_side || device->description().host_memory ? *device : *host_device();
}

// The side's pointer or handle, for reading or for writing (which moves the head there).
inline const void* side_data(SyncedMemory& mem, bool device_side) {
  return device_side ? mem.gpu_data() : mem.cpu_data();
}
inline void* side_mutable_data(SyncedMemory& mem, bool device_side) {
  return device_side ? mem.mutable_gpu_data() : mem.mutable_cpu_data();
}

}  // namespace blobrt::blob_math

#endif
