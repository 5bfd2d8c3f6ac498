#include "blobrt/syncedmem.hpp"

#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"
#include "host_memory.hpp"
#include "transfer_counters.hpp"

namespace blobrt {

SyncedMemory::SyncedMemory() : SyncedMemory(0) {}

SyncedMemory::SyncedMemory(std::size_t size)
    : device_(active_device()),
      model_(device_->description().memory_model()),
      size_(size) {}

SyncedMemory::~SyncedMemory() {
  release_cpu();
  release_gpu();
}

void SyncedMemory::check_device() const {
  // Caffe's check_device(): memory stays on the device it was allocated for.
  const std::shared_ptr<Device>& active = active_device();
  if (active != device_) {
    detail::fail("SyncedMemory of ", size_, " bytes is bound to device ",
                 device_->description().id(), " but the active device is now ",
                 active->description().id(), "; allocate a new blob after changing backends");
  }
}

void SyncedMemory::allocate_cpu() {
  if (shared()) {
    allocate_gpu();
    cpu_ptr_ = gpu_ptr_;
    return;
  }
  // A device that keeps buffers in host memory lends that memory as the mirror.
  if (model_ == MemoryModel::kAliased) {
    if (!gpu_ptr_) allocate_gpu();
    if (void* alias = device_->host_alias(gpu_ptr_)) {
      cpu_ptr_ = alias;
      cpu_is_alias_ = true;
      return;
    }
  }
  cpu_ptr_ = device_->allocate_host(size_);
  cpu_malloc_use_device_ = cpu_ptr_ != nullptr;
  if (!cpu_ptr_) {
    try {
      cpu_ptr_ = host_memory::allocate(size_);
    } catch (const OutOfMemoryError& e) {
      detail::fail_as<OutOfMemoryError>("cannot allocate the ", size_, "-byte host mirror of memory on ",
                                        device_->description().id(), ": ", e.what());
    }
  }
  own_cpu_data_ = true;
}

void SyncedMemory::allocate_gpu() {
  // A zero-byte blob still gets a valid handle (an OpenCL buffer cannot be empty).
  gpu_ptr_ = device_->allocate(size_ ? size_ : 1);
  own_gpu_data_ = true;
  if (shared()) cpu_ptr_ = gpu_ptr_;
}

void SyncedMemory::release_cpu() noexcept {
  if (cpu_is_alias_) {
    // Not ours to free: it goes with the device buffer.
    cpu_ptr_ = nullptr;
    cpu_is_alias_ = false;
    return;
  }
  if (cpu_ptr_ && own_cpu_data_) {
    if (cpu_malloc_use_device_) {
      device_->release_host(cpu_ptr_);
    } else {
      host_memory::release(cpu_ptr_);
    }
  }
  cpu_ptr_ = nullptr;
  own_cpu_data_ = false;
  cpu_malloc_use_device_ = false;
}

void SyncedMemory::release_gpu() noexcept {
  if (gpu_ptr_ && own_gpu_data_) device_->release(gpu_ptr_);
  gpu_ptr_ = nullptr;
  own_gpu_data_ = false;
  if (shared()) cpu_ptr_ = nullptr;
  if (cpu_is_alias_) release_cpu();  // the alias died with the buffer
}

void SyncedMemory::to_cpu() {
  switch (head_) {
    case UNINITIALIZED:
      allocate_cpu();
      if (shared()) {
        device_->memset(gpu_ptr_, 0, 0, size_);
      } else {
        host_memory::zero(cpu_ptr_, size_);
      }
      head_ = HEAD_AT_CPU;
      break;
    case HEAD_AT_GPU:
      if (!shared()) {
        check_device();
        if (cpu_ptr_ == nullptr) allocate_cpu();
        device_->copy_to_host(gpu_ptr_, 0, cpu_ptr_, size_);
        if (!cpu_is_alias_) detail::count_device_to_host(size_);
      }
      head_ = SYNCED;
      break;
    case HEAD_AT_CPU:
    case SYNCED:
      break;
  }
}

void SyncedMemory::to_gpu() {
  check_device();
  switch (head_) {
    case UNINITIALIZED:
      allocate_gpu();
      device_->memset(gpu_ptr_, 0, 0, size_);
      head_ = HEAD_AT_GPU;
      break;
    case HEAD_AT_CPU:
      if (!shared()) {
        if (gpu_ptr_ == nullptr) allocate_gpu();
        device_->copy_to_device(cpu_ptr_, gpu_ptr_, 0, size_);
        if (!cpu_is_alias_) detail::count_host_to_device(size_);
      }
      head_ = SYNCED;
      break;
    case HEAD_AT_GPU:
    case SYNCED:
      break;
  }
}

void SyncedMemory::push_to_device() {
  check_device();
  if (head_ != HEAD_AT_CPU) {
    detail::fail("SyncedMemory::async_gpu_push: the head must be at the host (HEAD_AT_CPU), not ",
                 head_ == UNINITIALIZED ? "UNINITIALIZED" : head_ == HEAD_AT_GPU ? "HEAD_AT_GPU" : "SYNCED",
                 " (size ", size_, " bytes)");
  }
  to_gpu();
}

const void* SyncedMemory::cpu_data() {
  to_cpu();
  return cpu_ptr_;
}

void SyncedMemory::set_cpu_data(void* data) {
  if (!data) detail::fail("SyncedMemory::set_cpu_data: null pointer (size ", size_, " bytes)");
  if (shared()) {
    // One buffer serves both sides: the caller's memory replaces it on both.
    release_gpu();
    gpu_ptr_ = data;
  }
  release_cpu();
  cpu_ptr_ = data;
  head_ = HEAD_AT_CPU;
}

const void* SyncedMemory::gpu_data() {
  to_gpu();
  return gpu_ptr_;
}

void SyncedMemory::set_gpu_data(void* data) {
  check_device();
  if (!data) detail::fail("SyncedMemory::set_gpu_data: null handle (size ", size_, " bytes)");
  release_gpu();
  gpu_ptr_ = data;
  if (shared()) {
    release_cpu();
    cpu_ptr_ = data;
  }
  head_ = HEAD_AT_GPU;
}

void* SyncedMemory::mutable_cpu_data() {
  to_cpu();
  head_ = HEAD_AT_CPU;
  return cpu_ptr_;
}

void* SyncedMemory::mutable_gpu_data() {
  to_gpu();
  head_ = HEAD_AT_GPU;
  return gpu_ptr_;
}

}  // namespace blobrt
