// caffe/util/device_alternate.hpp for Caffe's own sources built on blobrt (installed by
// blobrt-caffe; docs/caffe-on-blobrt.md).
//
// BLOBRT_CAFFE_PORTABLE (the one build for every node, docs/caffe-on-blobrt.md): Caffe's
// GPU code is compiled, whatever its build files said (they add CPU_ONLY where they find no
// CUDA, and are told to here so that they run no nvcc and link no CUDA library): CPU_ONLY
// is undone, and what Caffe's .cpp files use of the CUDA runtime comes from
// <blobrt/caffe/portable/device_runtime.hpp>, over blobrt's devices. The .cu files' part is
// caffe-portable-gpu.cmake's.
//
// CPU_ONLY: nothing here; <blobrt/caffe/common.hpp> defines NO_GPU and STUB_GPU*, whose
// GPU-mode Forward/Backward run the CPU code (Caffe's would abort), so a layer built
// without its .cu file works in GPU mode on every backend.
//
// A CUDA build (no CPU_ONLY): what Caffe's .cu layers and solvers use, as Caffe declares
// it: the CUDA, cuBLAS and cuRAND headers, CUDA_CHECK, CUBLAS_CHECK, CURAND_CHECK,
// CUDA_KERNEL_LOOP, CUDA_POST_KERNEL_CHECK, cublasGetErrorString and
// curandGetErrorString; CAFFE_CUDA_NUM_THREADS and CAFFE_GET_BLOCKS are common.hpp's. Such
// kernels run on the pointers gpu_data() returns, which are CUDA memory on the cuda
// backend only: run a CUDA build's GPU mode with BLOBRT_BACKEND=cuda.
//
// One device per thread, as in Caffe: Caffe's code moves a thread to a GPU in two ways,
// Caffe::SetDevice (the caffe tool, Solver) and a bare cudaSetDevice (InternalThread's
// prefetch thread, parallel.cpp's workers). On blobrt the CUDA runtime's current device
// (where Caffe's own kernels launch) and blobrt's per-thread device (where gpu_data()'s
// memory is) are kept the same both ways on the cuda backend: Caffe::SetDevice(n) also
// sets the runtime's device, and cudaSetDevice(n) in Caffe's code also selects cuda:n for
// the thread. On other backends cudaSetDevice is the CUDA runtime's alone.
#ifndef CAFFE_UTIL_DEVICE_ALTERNATE_H_
#define CAFFE_UTIL_DEVICE_ALTERNATE_H_

#include <vector>

#ifdef BLOBRT_CAFFE_PORTABLE
#undef CPU_ONLY
#include <blobrt/caffe/portable/device_runtime.hpp>
#elif !defined(CPU_ONLY)

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <driver_types.h>
#ifdef USE_CUDNN
#include "caffe/util/cudnn.hpp"
#endif

#include <glog/logging.h>

#include <string>

#include <blobrt/runtime.hpp>

#define CUDA_CHECK(condition)                                         \
  do {                                                                \
    cudaError_t blobrt_cuda_error = condition;                        \
    CHECK_EQ(blobrt_cuda_error, cudaSuccess) << " " << cudaGetErrorString(blobrt_cuda_error); \
  } while (0)

#define CUBLAS_CHECK(condition)                                       \
  do {                                                                \
    cublasStatus_t blobrt_cublas_status = condition;                  \
    CHECK_EQ(blobrt_cublas_status, CUBLAS_STATUS_SUCCESS) << " "      \
        << caffe::cublasGetErrorString(blobrt_cublas_status);         \
  } while (0)

#define CURAND_CHECK(condition)                                       \
  do {                                                                \
    curandStatus_t blobrt_curand_status = condition;                  \
    CHECK_EQ(blobrt_curand_status, CURAND_STATUS_SUCCESS) << " "      \
        << caffe::curandGetErrorString(blobrt_curand_status);         \
  } while (0)

// A grid-stride loop over [0, n).
#define CUDA_KERNEL_LOOP(i, n) \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// After a kernel launch: a launch error ends the program as CHECK does.
#define CUDA_POST_KERNEL_CHECK CUDA_CHECK(cudaPeekAtLastError())

namespace caffe {

// cuBLAS names its own codes (cuBLAS 11.4 and later).
inline const char* cublasGetErrorString(cublasStatus_t error) { return cublasGetStatusString(error); }

// cuRAND has no such function: the names of curandStatus_t's values.
inline const char* curandGetErrorString(curandStatus_t error) {
  switch (error) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "Unknown curand status";
}

namespace blobrt_cuda {

// Whether a device's memory is CUDA device memory (what Caffe's kernels can launch on):
// asked of its description, as DLPack would, never of its backend's name.
inline bool holds_cuda_memory(const blobrt::Device& device) {
  return device.description().native_type == blobrt::NativeDeviceType::kCuda;
}

// After Caffe::SetDevice selected a device for the thread: where it holds CUDA memory,
// Caffe's kernels launch on that CUDA device too.
inline void runtime_follows() {
  const blobrt::Device& device = *blobrt::current_device();
  if (holds_cuda_memory(device)) CUDA_CHECK((::cudaSetDevice)(device.description().native_index));
}

}  // namespace blobrt_cuda

}  // namespace caffe

// Caffe's cudaSetDevice(n): the CUDA runtime's, then, where the process's device holds
// CUDA memory, the calling thread moves to device n of that backend (whose device indices
// are the CUDA ordinals), as Caffe::SetDevice(n) would. The runtime's status is returned as
// it was, and a refused n moves nothing.
inline cudaError_t blobrt_caffe_cuda_set_device(int device) {
  const cudaError_t status = (::cudaSetDevice)(device);
  const blobrt::Device& process_device = *blobrt::default_device();
  if (status == cudaSuccess && caffe::blobrt_cuda::holds_cuda_memory(process_device)) {
    const std::string id = process_device.description().id();  // "cuda:0"
    blobrt::select_thread_device(id.substr(0, id.find(':')) + ":" + std::to_string(device));
  }
  return status;
}
// Unqualified on purpose, so ::cudaSetDevice(n) still reads as a call.
#define cudaSetDevice(device) blobrt_caffe_cuda_set_device(device)
#define BLOBRT_CAFFE_AFTER_SET_DEVICE() ::caffe::blobrt_cuda::runtime_follows()

#endif  // BLOBRT_CAFFE_PORTABLE, CPU_ONLY

#endif  // CAFFE_UTIL_DEVICE_ALTERNATE_H_
