// The CUDA plugin's local response normalization across channels (plugin ABI 1.6, Caffe's
// lrn_layer.cu kernels): lrn_scale and lrn_backward, kernels of the plugin's own on the
// device's stream, computing what the host kernels (blobrt_kernels/lrn.hpp) and the OpenCL
// plugin's (lrn.cpp) do. One thread per (outer, inner) position, over its channels with the
// running window sum in the host kernels' order (the entering channel added, the leaving one
// subtracted). Without these the portable Caffe build's LRNLayer took the host path through
// copies on the cuda backend wherever the Caffe-layers CUDA plugin is not installed. The core has checked the shape, the window (odd) and the
// operands, and sends no call without output.
#include <cstdint>

#include "context.hpp"
#include "device_math.cuh"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

struct LrnShape {
  int64_t outer, channels, inner, size;

  __host__ __device__ int64_t positions() const { return outer * inner; }
  __device__ int64_t first(int64_t q) const { return q / inner * channels * inner + q % inner; }
  // The channels after a position's window centre: where the running sum is written from.
  __device__ int64_t post_pad() const { return size - (size - 1) / 2 - 1; }
};

template <typename T>
__global__ void lrn_scale_kernel(LrnShape s, T alpha_over_size, T k, const T* bottom, T* scale) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t first = s.first(q), inner = s.inner, post_pad = s.post_pad();
    const T* x = bottom + first;
    T* y = scale + first;
    T accum = T(0);
    for (int64_t head = 0; head < s.channels + post_pad; ++head) {
      if (head < s.channels) accum += x[head * inner] * x[head * inner];
      if (head - s.size >= 0) accum -= x[(head - s.size) * inner] * x[(head - s.size) * inner];
      if (head - post_pad >= 0) y[(head - post_pad) * inner] = k + accum * alpha_over_size;
    }
  }
}

template <typename T>
__global__ void lrn_backward_kernel(LrnShape s, T negative_beta, T cache_ratio, const T* bottom, const T* top,
                                    const T* scale, const T* top_diff, T* bottom_diff) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t first = s.first(q), inner = s.inner, post_pad = s.post_pad();
    const T *x = bottom + first, *y = top + first, *sc = scale + first, *dy = top_diff + first;
    T* dx = bottom_diff + first;
    T accum = T(0);
    for (int64_t head = 0; head < s.channels + post_pad; ++head) {
      if (head < s.channels) accum += dy[head * inner] * y[head * inner] / sc[head * inner];
      if (head - s.size >= 0) {
        const int64_t o = (head - s.size) * inner;
        accum -= dy[o] * y[o] / sc[o];
      }
      if (head - post_pad >= 0) {
        const int64_t e = (head - post_pad) * inner;
        dx[e] = dy[e] * pow_(sc[e], negative_beta) - cache_ratio * x[e] * accum;
      }
    }
  }
}

}  // namespace

int lrn_scale(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, int64_t size,
              double alpha_over_size, double k, const void* bottom, int64_t bottom_offset, void* scale,
              int64_t scale_offset, blobrt_error* err) {
  const LrnShape s{outer, channels, inner, size};
  return launch_in_precision(context, precision, s.positions(), kThreads, "lrn_scale_kernel launch",
                             [&](auto zero, unsigned blocks, cudaStream_t stream) {
                               using T = decltype(zero);
                               lrn_scale_kernel<T><<<blocks, kThreads, 0, stream>>>(
                                   s, static_cast<T>(alpha_over_size), static_cast<T>(k), at<T>(bottom, bottom_offset),
                                   at<T>(scale, scale_offset));
                             },
                             err);
}

int lrn_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, int64_t size,
                 double negative_beta, double cache_ratio, const void* bottom, int64_t bottom_offset, const void* top,
                 int64_t top_offset, const void* scale, int64_t scale_offset, const void* top_diff,
                 int64_t top_diff_offset, void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  const LrnShape s{outer, channels, inner, size};
  return launch_in_precision(context, precision, s.positions(), kThreads, "lrn_backward_kernel launch",
                             [&](auto zero, unsigned blocks, cudaStream_t stream) {
                               using T = decltype(zero);
                               lrn_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(
                                   s, static_cast<T>(negative_beta), static_cast<T>(cache_ratio),
                                   at<T>(bottom, bottom_offset), at<T>(top, top_offset), at<T>(scale, scale_offset),
                                   at<T>(top_diff, top_diff_offset), at<T>(bottom_diff, bottom_diff_offset));
                             },
                             err);
}

}  // namespace blobrt_cuda
