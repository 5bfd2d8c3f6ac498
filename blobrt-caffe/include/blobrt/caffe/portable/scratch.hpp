// Temporary device memory for the portable forms of Caffe's .cu functions (the solvers'
// updates need one or two arrays beside their operands): per thread and slot, on the
// calling thread's device, grown as needed and kept for the next call.
#ifndef BLOBRT_CAFFE_PORTABLE_SCRATCH_HPP
#define BLOBRT_CAFFE_PORTABLE_SCRATCH_HPP

#include <cstddef>
#include <memory>

#include <blobrt/runtime.hpp>
#include <blobrt/syncedmem.hpp>

namespace blobrt_caffe_portable {

// n elements of Dtype on the current device, as a handle caffe_gpu_* take (never offset:
// a second array is a second slot).
template <typename Dtype>
Dtype* scratch(int slot, int n) {
  thread_local std::unique_ptr<blobrt::SyncedMemory> slots[2];
  std::unique_ptr<blobrt::SyncedMemory>& memory = slots[slot];
  const std::size_t bytes = static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(Dtype);
  if (!memory || memory->size() < bytes || memory->device() != blobrt::current_device()) {
    memory = std::make_unique<blobrt::SyncedMemory>(bytes);
  }
  return static_cast<Dtype*>(memory->mutable_gpu_data());
}

}  // namespace blobrt_caffe_portable

#endif  // BLOBRT_CAFFE_PORTABLE_SCRATCH_HPP
