// The CUDA plugin's own level-1 paths, and the choice between them and cuBLAS's kernels.
//
// cuBLAS's float axpy, scal and asum, and its double asum, stay below 0.9 of the GPU's
// streaming bandwidth on an H200 (the first GPU run, docs/performance-results-cuda.md:
// 0.83, 0.69, 0.70 and 0.87 of the probe at 2^26 elements), where the plugin's own
// element-wise kernels reach 0.93-1.00. So those four go through this plugin's kernels:
// axpy is the element-wise axpby with beta = 1 (y = alpha x + y: beta y is y exactly, the
// sum within a rounding of cuBLAS's, which nvcc may or may not fuse), scal the element-wise
// scale in place, asum the two-pass reduction below. Double
// axpy and scal, at 1.03 and 0.97 with cuBLAS, and dot stay on cuBLAS. blobrt-bench-cuda
// measures the chosen path (device/cuda:0/...) beside raw cuBLAS (raw/cublas/...) and the
// element-wise kernels (math/cuda:0/...), so each GPU run shows whether the table still holds.
//
// BLOBRT_CUDA_LEVEL1=cublas puts all four back on cuBLAS (bit-for-bit what cuBLAS gives),
// =own puts double axpy and scal on the plugin's kernels too; unset or =auto is the table.
#include <algorithm>
#include <cstdint>
#include <string>

#include "blobrt/elementwise_operations.h"
#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;  // per block, a multiple of the warp

__device__ __forceinline__ float abs_(float a) { return fabsf(a); }
__device__ __forceinline__ double abs_(double a) { return fabs(a); }

// The sum of v over the block, in thread 0 (the others hold a part). blockDim.x is a
// multiple of 32; the order of the additions is fixed, so a sum is the same every run.
template <typename T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[32];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[lane] : T(0);
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

// Pass 1: each block's sum of |x| over its grid-stride share, 16-byte loads where x is
// 16-byte aligned, into partials[blockIdx.x].
template <typename T>
__global__ void abs_sum_partials(int64_t n, const T* x, bool packed, T* partials) {
  constexpr int kWidth = 16 / sizeof(T);
  struct alignas(16) Pack {
    T v[kWidth];
  };
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  T sum = 0;
  int64_t done = 0;
  if (packed) {
    const int64_t packs = n / kWidth;
    for (int64_t i = first; i < packs; i += stride) {
      const Pack p = reinterpret_cast<const Pack*>(x)[i];
#pragma unroll
      for (int j = 0; j < kWidth; ++j) sum += abs_(p.v[j]);
    }
    done = packs * kWidth;
  }
  for (int64_t i = done + first; i < n; i += stride) sum += abs_(x[i]);
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Pass 2: one block adds the partials, in a fixed order.
template <typename T>
__global__ void sum_partials(int count, const T* partials, T* result) {
  T sum = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *result = sum;
}

// Which operations run on this plugin's kernels under BLOBRT_CUDA_LEVEL1=auto.
bool own_by_default(Level1Op op, bool is_double) {
  switch (op) {
    case Level1Op::kAxpy: return !is_double;
    case Level1Op::kScal: return !is_double;
    case Level1Op::kAsum: return true;
  }
  return false;
}

}  // namespace

int level1_mode_from_environment(Level1Mode* mode, blobrt_error* err) {
  // Through the kit, as every plugin setting: unset in a setuid process (docs/hardening.md).
  const std::string value = blobrt::plugin_kit::getenv("BLOBRT_CUDA_LEVEL1");
  if (value.empty() || value == "auto") {
    *mode = Level1Mode::kAuto;
  } else if (value == "cublas") {
    *mode = Level1Mode::kCublas;
  } else if (value == "own") {
    *mode = Level1Mode::kOwn;
  } else {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT,
                       "BLOBRT_CUDA_LEVEL1=%s: expected auto, cublas or own", value.c_str());
  }
  return BLOBRT_OK;
}

bool level1_uses_own_kernel(const Context* c, Level1Op op, bool is_double) {
  switch (c->level1) {
    case Level1Mode::kCublas: return false;
    case Level1Mode::kOwn: return true;
    case Level1Mode::kAuto: break;
  }
  return own_by_default(op, is_double);
}

int level1_partials_capacity(int multiprocessors) { return 8 * multiprocessors + 1; }

template <typename T>
int own_axpy(Context* c, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
  return elementwise(c, sizeof(T) == 8 ? BLOBRT_FLOAT64 : BLOBRT_FLOAT32, BLOBRT_EW_AXPBY, n, alpha, 1.0, x, xo,
                     nullptr, 0, y, yo, err);
}

template <typename T>
int own_scal(Context* c, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err) {
  return elementwise(c, sizeof(T) == 8 ? BLOBRT_FLOAT64 : BLOBRT_FLOAT32, BLOBRT_EW_SCALE, n, alpha, 0.0, x, xo,
                     nullptr, 0, x, xo, err);
}

template <typename T>
int own_asum(Context* c, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err) {
  const T* data = at<T>(x, xo);
  const bool packed = reinterpret_cast<uintptr_t>(data) % 16 == 0;
  constexpr int64_t kWidth = 16 / sizeof(T);
  const int64_t work = packed ? (n + kWidth - 1) / kWidth : n;
  // The grid of the element-wise kernels (8 blocks of 256 per multiprocessor), fewer for
  // small n; its partials fit the context's scratch, whose last slot takes the result.
  const int64_t most = level1_partials_capacity(c->multiprocessors) - 1;
  const int blocks = static_cast<int>(std::min<int64_t>(most, (work + kThreads - 1) / kThreads));
  std::lock_guard<std::mutex> lock(c->scratch_mutex);  // until the result is back on the host
  T* partials = static_cast<T*>(c->scratch);
  abs_sum_partials<T><<<blocks, kThreads, 0, c->stream>>>(n, data, packed, partials);
  CUDA_CHECK(cudaGetLastError(), sizeof(T) == 8 ? "abs_sum_partials<double> launch" : "abs_sum_partials<float> launch");
  sum_partials<T><<<1, 1024, 0, c->stream>>>(blocks, partials, partials + most);
  CUDA_CHECK(cudaGetLastError(), sizeof(T) == 8 ? "sum_partials<double> launch" : "sum_partials<float> launch");
  CUDA_CHECK(cudaMemcpyAsync(r, partials + most, sizeof(T), cudaMemcpyDeviceToHost, c->stream),
             "cudaMemcpyAsync(DeviceToHost)");
  CUDA_CHECK(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
  return BLOBRT_OK;
}

template int own_axpy<float>(Context*, int64_t, float, const void*, int64_t, void*, int64_t, blobrt_error*);
template int own_axpy<double>(Context*, int64_t, double, const void*, int64_t, void*, int64_t, blobrt_error*);
template int own_scal<float>(Context*, int64_t, float, void*, int64_t, blobrt_error*);
template int own_scal<double>(Context*, int64_t, double, void*, int64_t, blobrt_error*);
template int own_asum<float>(Context*, int64_t, const void*, int64_t, float*, blobrt_error*);
template int own_asum<double>(Context*, int64_t, const void*, int64_t, double*, blobrt_error*);

}  // namespace blobrt_cuda
