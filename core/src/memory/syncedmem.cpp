#include "blobrt/syncedmem.hpp"

#include "blobrt/error.hpp"
#include "device_source.hpp"
#include "host_memory.hpp"
#include "transfer_counters.hpp"

#include <string>
#include <utility>

namespace blobrt {

SyncedMemory::SyncedMemory() : SyncedMemory(0) {}

SyncedMemory::SyncedMemory(std::size_t size)
    : device_(device_source::current()),
      model_(device_->description().memory_model),
      size_(size) {}

SyncedMemory::~SyncedMemory() {
  release_cpu();
  release_gpu();
}

void SyncedMemory::check_device() const {
  // Caffe's check_device(): memory stays on the device it was allocated for, and its
  // device side is used from a thread whose current device is that one.
  const std::shared_ptr<Device>& current = device_source::current();
  if (current != device_) {
    const std::string id = device_->description().id();
    detail::fail("SyncedMemory of ", size_, " bytes is bound to device ", id,
                 " but this thread's current device is ", current->description().id(),
                 "; use it under blobrt::DeviceGuard guard(\"", id, "\") or allocate a new blob on ",
                 current->description().id());
  }
}

namespace {
void release_host_memory(Device*, void* pointer) noexcept { host_memory::release(pointer); }
}  // namespace

void SyncedMemory::allocate_cpu() {
  if (shared()) {
    allocate_gpu();  // one allocation serves both sides
    return;
  }
  // A device that keeps buffers in host memory lends that memory as the mirror.
  if (model_ == MemoryModel::kAliased) {
    if (!gpu_) allocate_gpu();
    if (void* alias = device_->host_alias(gpu_.get())) {
      cpu_ = DataPtr::borrowed(alias);
      cpu_views_gpu_ = true;
      return;
    }
  }
  if (void* pinned = device_->allocate_host(size_)) {
    cpu_ = DataPtr(pinned, device_, DataPtr::release_pinned_host);  // Caffe's cpu_malloc_use_cuda_
    return;
  }
  try {
    cpu_ = DataPtr(host_memory::allocate(size_), nullptr, release_host_memory);
  } catch (const OutOfMemoryError& e) {
    detail::fail_as<OutOfMemoryError>("cannot allocate the ", size_, "-byte host mirror of memory on ",
                                      device_->description().id(), ": ", e.what());
  }
}

void SyncedMemory::allocate_gpu() {
  // A zero-byte blob still gets a valid handle (an OpenCL buffer cannot be empty).
  gpu_ = DataPtr(device_->allocate(size_ ? size_ : 1), device_, DataPtr::release_buffer);
  if (shared()) {
    cpu_ = DataPtr::borrowed(gpu_.get());
    cpu_views_gpu_ = true;
  }
}

void SyncedMemory::release_cpu() noexcept {
  cpu_.reset();  // a view or lent memory is not freed: its DataPtr owns nothing
  cpu_views_gpu_ = false;
}

void SyncedMemory::release_gpu() noexcept {
  if (cpu_views_gpu_) release_cpu();  // the view dies with the buffer
  gpu_.reset();
}

void SyncedMemory::to_cpu() {
  switch (head_) {
    case UNINITIALIZED:
      allocate_cpu();
      if (shared()) {
        device_->memset(gpu_.get(), 0, 0, size_);
      } else {
        host_memory::zero(cpu_.get(), size_);
      }
      head_ = HEAD_AT_CPU;
      break;
    case HEAD_AT_GPU:
      if (!shared()) {
        check_device();
        if (!cpu_) allocate_cpu();
        if (cpu_views_gpu_) {
          device_->sync_host_alias(gpu_.get(), 0, size_, Device::AliasSync::kToHost);  // moves no bytes
        } else {
          device_->copy_to_host(gpu_.get(), 0, cpu_.get(), size_);
          detail::count_device_to_host(size_);
        }
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
      device_->memset(gpu_.get(), 0, 0, size_);
      head_ = HEAD_AT_GPU;
      break;
    case HEAD_AT_CPU:
      if (!shared()) {
        if (!gpu_) allocate_gpu();
        if (cpu_views_gpu_) {
          device_->sync_host_alias(gpu_.get(), 0, size_, Device::AliasSync::kToDevice);  // moves no bytes
        } else {
          device_->copy_to_device(cpu_.get(), gpu_.get(), 0, size_);
          detail::count_host_to_device(size_);
        }
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
  return cpu_.get();
}

void SyncedMemory::set_cpu_data(void* data) {
  if (!data) detail::fail("SyncedMemory::set_cpu_data: null pointer (size ", size_, " bytes)");
  if (shared()) {
    // One buffer serves both sides: the caller's memory replaces it on both.
    release_gpu();
    gpu_ = DataPtr::borrowed(data);
  }
  release_cpu();
  cpu_ = DataPtr::borrowed(data);
  cpu_views_gpu_ = shared();
  head_ = HEAD_AT_CPU;
}

const void* SyncedMemory::gpu_data() {
  to_gpu();
  return gpu_.get();
}

void SyncedMemory::set_gpu_data(void* data) { set_gpu_data(data, nullptr); }

void SyncedMemory::set_gpu_data(void* data, std::shared_ptr<void> owner) {
  set_gpu_data(data, std::move(owner), size_);
}

void SyncedMemory::set_gpu_data(void* data, std::shared_ptr<void> owner, std::size_t size) {
  check_device();
  if (!data) detail::fail("SyncedMemory::set_gpu_data: null handle (size ", size, " bytes)");
  release_gpu();
  // A host mirror of the old size is too small for a larger region (a smaller one is fine).
  if (size > size_) release_cpu();
  size_ = size;
  if (!cpu_views_gpu_ && model_ == MemoryModel::kAliased) release_cpu();  // the new buffer has its own alias
  gpu_ = DataPtr::shared(data, std::move(owner));
  if (shared()) {
    release_cpu();
    cpu_ = DataPtr::borrowed(data);
    cpu_views_gpu_ = true;
  }
  head_ = HEAD_AT_GPU;
}

void* SyncedMemory::mutable_cpu_data() {
  to_cpu();
  head_ = HEAD_AT_CPU;
  return cpu_.get();
}

void* SyncedMemory::mutable_gpu_data() {
  to_gpu();
  head_ = HEAD_AT_GPU;
  return gpu_.get();
}

}  // namespace blobrt
