// SyncedMemory: Caffe's lazily allocated, host/device mirrored buffer, generalised to
// the host plus one Device: the current device of the thread that made it (runtime.hpp).
//
// States keep Caffe's names; HEAD_AT_GPU means "newest copy is on the bound device".
// As in Caffe, memory stays on the device it was made for: its device side (gpu_data,
// set_gpu_data, a pull from the device) is used from a thread whose current device is that
// one, else it throws blobrt::Error naming both; its host side can be read anywhere.
// Three ways the host mirror relates to the device buffer, per device (MemoryModel in
// device.hpp):
//  - shared:   the device's memory is host memory (host, blis); one allocation serves
//              both sides and no copy or synchronisation call is ever made;
//  - aliased:  the device keeps the buffer in host memory behind a handle (OpenCL with
//              CL_MEM_USE_HOST_PTR on PoCL): the host mirror is that memory and a
//              transition is a map/unmap that moves no bytes;
//  - separate: a real copy each way (CUDA, OpenCL on a GPU), pinned when offered.
// head() goes through exactly the same transitions in all three.
#ifndef BLOBRT_SYNCEDMEM_HPP
#define BLOBRT_SYNCEDMEM_HPP

#include <cstddef>
#include <memory>

#include "blobrt/data_ptr.hpp"
#include "blobrt/device.hpp"

namespace blobrt {

class SyncedMemory {
 public:
  enum SyncedHead { UNINITIALIZED, HEAD_AT_CPU, HEAD_AT_GPU, SYNCED };
  static constexpr SyncedHead HEAD_AT_HOST = HEAD_AT_CPU;
  static constexpr SyncedHead HEAD_AT_DEVICE = HEAD_AT_GPU;

  // Binds to the calling thread's current device (initialising the runtime if needed).
  SyncedMemory();
  explicit SyncedMemory(std::size_t size);
  ~SyncedMemory();
  SyncedMemory(const SyncedMemory&) = delete;
  SyncedMemory& operator=(const SyncedMemory&) = delete;

  const void* cpu_data();
  void set_cpu_data(void* data);  // never freed by blobrt
  const void* gpu_data();         // a device handle (a cl_mem for OpenCL)
  void set_gpu_data(void* data);  // a handle of the bound device; never freed by blobrt
  // set_gpu_data for a handle whose memory `owner` keeps alive: this SyncedMemory holds
  // `owner` until it lets go of the handle (a view into a larger allocation).
  void set_gpu_data(void* data, std::shared_ptr<void> owner);
  // The same for a handle of `size` bytes, which becomes size(): a region smaller than the
  // memory it replaces (a view) is then never read or written past its end, and a Blob
  // growing past it gets fresh memory (Blob::Reshape compares with size()).
  void set_gpu_data(void* data, std::shared_ptr<void> owner, std::size_t size);
  void* mutable_cpu_data();
  void* mutable_gpu_data();

  // Caffe's async_gpu_push(const cudaStream_t&): the head must be at the host; the data
  // goes to the device and the head becomes SYNCED. Any stream type is accepted, and the
  // copy has completed when this returns (it runs on the device's own queue, which is
  // stronger than Caffe's "synchronize on the stream before use").
  template <typename Stream>
  void async_gpu_push(const Stream& /*stream*/) {
    push_to_device();
  }
  void push_to_device();

  SyncedHead head() const { return head_; }
  std::size_t size() const { return size_; }
  // The device this memory is bound to.
  const std::shared_ptr<Device>& device() const { return device_; }

 private:
  void to_cpu();
  void to_gpu();
  void check_device() const;
  void allocate_cpu();
  void allocate_gpu();
  void release_cpu() noexcept;
  void release_gpu() noexcept;

  std::shared_ptr<Device> device_;
  bool shared() const { return model_ == MemoryModel::kShared; }

  MemoryModel model_;  // of device_ (device.hpp): shared, aliased or separate
  // Each side with how it is freed (data_ptr.hpp): a buffer of device_, pinned memory of
  // device_, ordinary host memory, or lent memory that is never freed here.
  DataPtr gpu_;
  DataPtr cpu_;
  bool cpu_views_gpu_ = false;  // cpu_ is gpu_'s memory (shared) or its alias (aliased)
  std::size_t size_ = 0;
  SyncedHead head_ = UNINITIALIZED;
};

}  // namespace blobrt

#endif  // BLOBRT_SYNCEDMEM_HPP
