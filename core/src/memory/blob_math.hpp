// Where Blob's math runs: on the memory's bound device for device handles; on host
// pointers, through that device's own kernels when its memory is host memory (host,
// blis: the pointer is a valid handle), else the built-in host device's. One virtual call
// per operation, never one per element.
#ifndef BLOBRT_BLOB_MATH_HPP
#define BLOBRT_BLOB_MATH_HPP

#include "blobrt/error.hpp"
#include "blobrt/syncedmem.hpp"
#include "device_source.hpp"

namespace blobrt::blob_math {

// Caffe's rule: the math goes to the device when the head is there or synced.
inline bool on_device(const SyncedMemory& mem) {
  return mem.head() == SyncedMemory::HEAD_AT_GPU || mem.head() == SyncedMemory::SYNCED;
}

// The device that runs math on `mem`'s side: its own device for device handles; for host
// pointers, that device when its memory is host memory, else the built-in host device.
inline Device& math_device(const SyncedMemory& mem, bool device_side) {
  const auto& device = mem.device();
  return device_side || device->description().memory_model == blobrt::MemoryModel::kShared ? *device : *device_source::host();
}

// An operation between memories of two devices is an error, as in Caffe (memory stays on
// its device; nothing moves it behind the caller's back). `what` names the operation and
// the two memories, e.g. "CopyFrom: the source", "this Blob".
inline void same_device(const SyncedMemory& a, const char* a_name, const SyncedMemory& b, const char* b_name,
                        const char* operation) {
  if (a.device() == b.device()) return;
  detail::fail(operation, ": ", a_name, " is on device ", a.device()->description().id(), " and ", b_name,
               " on device ", b.device()->description().id(),
               "; an operation between blobs of two devices is not done: copy through the host "
               "(cpu_data() into mutable_cpu_data()) or make both on one device");
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
