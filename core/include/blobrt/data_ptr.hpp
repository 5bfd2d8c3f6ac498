// DataPtr: memory together with who frees it and how (PyTorch's c10::DataPtr is the
// model). SyncedMemory keeps its host mirror and its device buffer in two of these, so a
// buffer is always freed by the device that allocated it, by the call that matches the
// allocation (release, release_host or the host allocator), or not at all when it was
// lent (set_cpu_data/set_gpu_data, an alias of another buffer).
#ifndef BLOBRT_DATA_PTR_HPP
#define BLOBRT_DATA_PTR_HPP

#include <memory>
#include <utility>

#include "blobrt/device.hpp"

namespace blobrt {

class DataPtr {
 public:
  // Frees `pointer`; `device` is the one given at construction (may be null).
  using Deleter = void (*)(Device* device, void* pointer) noexcept;

  DataPtr() noexcept = default;
  DataPtr(void* pointer, std::shared_ptr<Device> device, Deleter deleter) noexcept
      : pointer_(pointer), device_(std::move(device)), deleter_(deleter) {}
  // Memory this DataPtr uses but never frees.
  static DataPtr borrowed(void* pointer) noexcept { return DataPtr(pointer, nullptr, nullptr); }
  // Memory owned elsewhere and kept alive while this DataPtr holds `owner` (a view into a
  // larger allocation, as libblobrt-dist lays many blobs' diffs out in one).
  static DataPtr shared(void* pointer, std::shared_ptr<void> owner) noexcept {
    DataPtr d(pointer, nullptr, nullptr);
    d.owner_ = std::move(owner);
    return d;
  }

  DataPtr(DataPtr&& other) noexcept { swap(other); }
  DataPtr& operator=(DataPtr&& other) noexcept {
    DataPtr(std::move(other)).swap(*this);
    return *this;
  }
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  ~DataPtr() { reset(); }

  void* get() const noexcept { return pointer_; }
  explicit operator bool() const noexcept { return pointer_ != nullptr; }

  // Frees the memory if owned; empty afterwards.
  void reset() noexcept {
    if (pointer_ && deleter_) deleter_(device_.get(), pointer_);
    pointer_ = nullptr;
    device_.reset();
    deleter_ = nullptr;
    owner_.reset();
  }

  // The deleters SyncedMemory uses.
  static void release_buffer(Device* device, void* pointer) noexcept { device->release(pointer); }
  static void release_pinned_host(Device* device, void* pointer) noexcept { device->release_host(pointer); }

 private:
  void swap(DataPtr& other) noexcept {
    std::swap(pointer_, other.pointer_);
    device_.swap(other.device_);
    std::swap(deleter_, other.deleter_);
    owner_.swap(other.owner_);
  }

  void* pointer_ = nullptr;
  std::shared_ptr<Device> device_;  // kept alive until the memory is freed
  Deleter deleter_ = nullptr;
  std::shared_ptr<void> owner_;  // keeps shared() memory alive
};

}  // namespace blobrt

#endif  // BLOBRT_DATA_PTR_HPP
