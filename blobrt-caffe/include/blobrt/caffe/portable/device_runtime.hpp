// What Caffe's non-.cu sources use of the CUDA runtime in a GPU build, over blobrt's
// devices, for the portable build (BLOBRT_CAFFE_PORTABLE; docs/caffe-on-blobrt.md, "One
// build for every node"): the tool's device count and properties, InternalThread's
// cudaGetDevice/cudaSetDevice, the prefetch thread's stream, the Timer's events. No CUDA
// header and no CUDA library: a device here is one of the active backend's devices, as
// Caffe::SetDevice counts them ("opencl:1" is device 1), whatever its kind.
//
// Streams stand for the device's own queue: synchronizing one waits for the calling
// thread's device. An event records the time once the device has finished what was sent
// before it, so cudaEventElapsedTime measures what the device did between two records.
#ifndef BLOBRT_CAFFE_PORTABLE_DEVICE_RUNTIME_HPP
#define BLOBRT_CAFFE_PORTABLE_DEVICE_RUNTIME_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <glog/logging.h>

#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/error.hpp>
#include <blobrt/runtime.hpp>

// The codes Caffe's sources compare with or print.
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorUnknown = 999
};
typedef cudaError_t cudaError;

// As CUDA's: plain numbers (cudaStreamSynchronize(cudaStreamDefault) passes one as a stream).
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01

// CUDA's function qualifiers, which a fork's headers may declare functions with outside
// CPU_ONLY: nothing here (no kernel is compiled).
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif

struct blobrt_caffe_stream_;
typedef blobrt_caffe_stream_* cudaStream_t;
struct blobrt_caffe_event_ {
  std::chrono::steady_clock::time_point at;
  bool recorded = false;
};
typedef blobrt_caffe_event_* cudaEvent_t;

// cuBLAS and cuRAND handles are never made here (blobrt's math has its own): the types are
// for declarations Caffe's headers make.
struct blobrt_caffe_cublas_;
typedef blobrt_caffe_cublas_* cublasHandle_t;
struct blobrt_caffe_curand_;
typedef blobrt_caffe_curand_* curandGenerator_t;
enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0 };
enum curandStatus_t { CURAND_STATUS_SUCCESS = 0 };

// The fields of CUDA's cudaDeviceProp that Caffe's sources and tests read, filled from the
// device's description: what blobrt does not know is 0.
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  std::size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  std::size_t totalConstMem;
  int major;
  int minor;
  std::size_t textureAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int unifiedAddressing;
  // Caffe before its NCCL version (SSD's, OpenPose's and py-faster-rcnn's P2PSync) pairs the
  // GPUs of one board first: no blobrt device says it shares a board, so both stay 0.
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
};

// The directions cudaMemcpy takes, with CUDA's values.
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

namespace blobrt_caffe_portable {

// The active backend's name ("opencl" of "opencl:0").
inline std::string backend() {
  const std::string id = blobrt::current_device_id();
  return id.substr(0, id.find(':'));
}

inline int device_count() {
  const std::string prefix = backend() + ":";
  int count = 0;
  for (const std::string& id : blobrt::available_devices()) count += id.compare(0, prefix.size(), prefix) == 0;
  return count;
}

inline bool valid_device(int device) { return device >= 0 && device < device_count(); }

// Asked for once when the program or library compiled with these headers starts, before
// it opens a device (gpu_methods.hpp, request_addressable_handles).
inline const bool addressable_handles_requested = request_addressable_handles();

// Caffe::set_mode(GPU) and Caffe::SetDevice in GPU mode: Caffe's GPU code will offset the
// thread's device's handles, so that device must take offset handles; an Error naming it
// otherwise (a device opened before the request above), never a wild handle later.
inline void check_gpu_device() {
  const blobrt::Device& device = *blobrt::current_device();
  if (!blobrt::handles_take_offsets(device)) {
    const blobrt::DeviceDescription& d = device.description();
    blobrt::detail::fail("Caffe's GPU mode on ", d.id(), " (", d.name, "): its buffer handles are not addresses "
                         "and it was opened before Caffe's library asked for addressable ones (open no device "
                         "before loading Caffe, or set BLOBRT_ADDRESSABLE_HANDLES=1)");
  }
}

// cudaMalloc's buffers and the device each was made on (the thread's device then): so that
// cudaFree releases a buffer on its own device and a copy between two devices' buffers (old
// Caffe's P2PSync copies between its GPUs' parameter buffers) goes through the host, as
// CUDA's unified addressing lets it, whichever device the calling thread has selected.
class DeviceAllocations {
 public:
  static DeviceAllocations& get() {
    static DeviceAllocations* allocations = new DeviceAllocations();  // used from static destructors too
    return *allocations;
  }
  void* allocate(std::size_t bytes) {
    const std::shared_ptr<blobrt::Device>& device = blobrt::current_device();
    void* buffer = device->allocate(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    owners_[buffer] = Owner{device, bytes};
    return buffer;
  }
  // False for a pointer cudaMalloc did not give.
  bool release(void* buffer) {
    std::shared_ptr<blobrt::Device> owner;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = owners_.find(buffer);
      if (found == owners_.end()) return false;
      owner = found->second.device;
      owners_.erase(found);
    }
    owner->release(buffer);
    return true;
  }
  // The device of the cudaMalloc buffer holding `pointer` (a handle plus an offset, as
  // Caffe's code makes them), else the thread's device (Blob memory is the thread's device's).
  std::shared_ptr<blobrt::Device> device_of(const void* pointer) {
    std::shared_ptr<blobrt::Device> owner = made_by(pointer);
    return owner ? owner : blobrt::current_device();
  }
  // cudaMemcpyDefault's question: whether `pointer` is device memory (a cudaMalloc buffer, or
  // a buffer of the thread's device), else host memory, as CUDA's unified addressing tells.
  bool is_device_memory(const void* pointer) {
    return made_by(pointer) != nullptr || blobrt::current_device()->is_buffer(pointer);
  }

 private:
  std::shared_ptr<blobrt::Device> made_by(const void* pointer) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto after = owners_.upper_bound(const_cast<void*>(pointer));
    if (after == owners_.begin()) return nullptr;
    const auto& [buffer, owner] = *std::prev(after);
    const auto start = reinterpret_cast<std::uintptr_t>(buffer), at = reinterpret_cast<std::uintptr_t>(pointer);
    return at - start < owner.bytes ? owner.device : nullptr;
  }
  struct Owner {
    std::shared_ptr<blobrt::Device> device;
    std::size_t bytes;
  };
  std::mutex mutex_;
  std::map<void*, Owner> owners_;
};

}  // namespace blobrt_caffe_portable

inline const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no device of the active blobrt backend";
    case cudaErrorInvalidDevice: return "invalid device ordinal (not a device of the active blobrt backend)";
    default: return "unknown error";
  }
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaPeekAtLastError() { return cudaSuccess; }

inline cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = blobrt_caffe_portable::device_count();
  return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}
inline cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = blobrt::current_device()->description().index;
  return cudaSuccess;
}
// As Caffe::SetDevice: the calling thread moves to device n of the active backend.
inline cudaError_t cudaSetDevice(int device) {
  if (!blobrt_caffe_portable::valid_device(device)) return cudaErrorInvalidDevice;
  blobrt::select_thread_device(blobrt_caffe_portable::backend() + ":" + std::to_string(device));
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return cudaErrorInvalidValue;
  if (!blobrt_caffe_portable::valid_device(device)) return cudaErrorInvalidDevice;
  const auto opened = blobrt::open_device(blobrt_caffe_portable::backend() + ":" + std::to_string(device));
  const blobrt::DeviceDescription& d = opened->description();
  std::memset(prop, 0, sizeof(*prop));
  std::strncpy(prop->name, d.name.c_str(), sizeof(prop->name) - 1);
  prop->totalGlobalMem = static_cast<std::size_t>(d.memory_bytes);
  // Caffe's tests run their double-precision GPU cases from compute capability 2 on: 2 where
  // the device has fp64, 1 where it has not.
  prop->major = d.supports_fp64 ? 2 : 1;
  prop->integrated = d.memory_model == blobrt::MemoryModel::kShared;
  prop->canMapHostMemory = d.memory_model == blobrt::MemoryModel::kShared;
  prop->unifiedAddressing = d.addressable_handles;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  blobrt::current_device()->synchronize();
  return cudaSuccess;
}

inline cudaError_t cudaMalloc(void** pointer, std::size_t bytes) {
  if (pointer == nullptr) return cudaErrorInvalidValue;
  try {
    *pointer = blobrt_caffe_portable::DeviceAllocations::get().allocate(bytes);
  } catch (const blobrt::Error& e) {
    LOG(ERROR) << "cudaMalloc of " << bytes << " bytes: " << e.what();
    return cudaErrorMemoryAllocation;
  }
  return cudaSuccess;
}
template <typename T>
cudaError_t cudaMalloc(T** pointer, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}
inline cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  return blobrt_caffe_portable::DeviceAllocations::get().release(pointer) ? cudaSuccess : cudaErrorInvalidValue;
}

// Copies in every direction on blobrt's devices: a device pointer is a handle of the device
// that made it (DeviceAllocations), else of the thread's device. Synchronous: the stream is
// the device's own queue, which a copy waits for.
inline cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  blobrt_caffe_portable::DeviceAllocations& allocations = blobrt_caffe_portable::DeviceAllocations::get();
  switch (kind) {
    case cudaMemcpyHostToHost: std::memmove(dst, src, bytes); return cudaSuccess;
    case cudaMemcpyHostToDevice: allocations.device_of(dst)->copy_to_device(src, dst, 0, bytes); return cudaSuccess;
    case cudaMemcpyDeviceToHost: allocations.device_of(src)->copy_to_host(src, 0, dst, bytes); return cudaSuccess;
    case cudaMemcpyDeviceToDevice: {
      const std::shared_ptr<blobrt::Device> from = allocations.device_of(src), to = allocations.device_of(dst);
      if (from == to) {
        from->copy_device(src, 0, dst, 0, bytes);
      } else {  // two devices: through the host
        std::vector<unsigned char> staged(bytes);
        from->copy_to_host(src, 0, staged.data(), bytes);
        to->copy_to_device(staged.data(), dst, 0, bytes);
      }
      return cudaSuccess;
    }
    case cudaMemcpyDefault: {
      const bool from_device = allocations.is_device_memory(src), to_device = allocations.is_device_memory(dst);
      return cudaMemcpy(dst, src, bytes,
                        from_device ? (to_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                                    : (to_device ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost));
    }
    default: return cudaErrorInvalidValue;
  }
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t /*stream*/ = nullptr) {
  return cudaMemcpy(dst, src, bytes, kind);
}

// Peer access: blobrt's devices reach each other's memory only through the host (cudaMemcpy
// above), so none has access to another's.
inline cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer) {
  if (can_access == nullptr) return cudaErrorInvalidValue;
  if (!blobrt_caffe_portable::valid_device(device) || !blobrt_caffe_portable::valid_device(peer)) {
    return cudaErrorInvalidDevice;
  }
  *can_access = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceEnablePeerAccess(int /*peer*/, unsigned int /*flags*/) { return cudaErrorInvalidValue; }
inline cudaError_t cudaDeviceDisablePeerAccess(int /*peer*/) { return cudaErrorInvalidValue; }

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int /*flags*/) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  *stream = nullptr;  // the device's own queue
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, 0); }
inline cudaError_t cudaStreamSynchronize(cudaStream_t /*stream*/) { return cudaDeviceSynchronize(); }
inline cudaError_t cudaStreamDestroy(cudaStream_t /*stream*/) { return cudaSuccess; }

inline cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return cudaErrorInvalidValue;
  *event = new blobrt_caffe_event_();
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t /*stream*/ = nullptr) {
  if (event == nullptr) return cudaErrorInvalidValue;
  blobrt::current_device()->synchronize();
  event->at = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return event != nullptr && event->recorded ? cudaSuccess : cudaErrorInvalidValue;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  if (ms == nullptr || start == nullptr || stop == nullptr || !start->recorded || !stop->recorded) {
    return cudaErrorInvalidValue;
  }
  *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
  return cudaSuccess;
}

#define BLOBRT_CAFFE_CHECK_GPU_DEVICE() ::blobrt_caffe_portable::check_gpu_device()

#define CUDA_CHECK(condition)                                                            \
  do {                                                                                   \
    cudaError_t blobrt_cuda_error = condition;                                           \
    CHECK_EQ(blobrt_cuda_error, cudaSuccess) << " " << cudaGetErrorString(blobrt_cuda_error); \
  } while (0)
#define CUBLAS_CHECK(condition) CHECK_EQ((condition), CUBLAS_STATUS_SUCCESS)
#define CURAND_CHECK(condition) CHECK_EQ((condition), CURAND_STATUS_SUCCESS)
#define CUDA_POST_KERNEL_CHECK CUDA_CHECK(cudaPeekAtLastError())

#endif  // BLOBRT_CAFFE_PORTABLE_DEVICE_RUNTIME_HPP
