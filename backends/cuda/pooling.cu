// The CUDA plugin's pooling operations (plugin ABI 1.5): Caffe's max and average pooling,
// forward and backward (pooling_layer.cu's kernels), kernels of the plugin's own on the
// device's stream, computing what the host kernels (blobrt_kernels/pooling.hpp) and the
// OpenCL plugin's (pooling.cpp) do. Forward: one thread per pooled element, over its window in
// row order (the first maximum wins); backward: one thread per bottom element, gathering over
// the windows that hold it in window order, so no two threads write one element and the sum is
// the host kernel's, in its order. Max pooling's backward finds each window's maximum again in
// the bottom data (no mask: the operation has none). Without these the portable Caffe build's
// PoolingLayer took the host path through copies on the cuda backend wherever the Caffe-layers
// CUDA plugin is not installed. The core has checked the geometry (kernel and stride at least
// 1, padding below the kernel) and the operands, and sends no call without output; a window
// that starts past the image (Caffe keeps such last windows) covers no element.
#include <cfloat>
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

struct PoolGeometry {
  int64_t planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;

  __host__ __device__ int64_t top_count() const { return planes * pooled_h * pooled_w; }
  __host__ __device__ int64_t bottom_count() const { return planes * height * width; }
};

// Window (ph, pw): rows [h0, h1), columns [w0, w1) inside the image, and its size clipped to
// the padded image (the average's divisor: padding counts as zeros, as Caffe's pool_size).
struct Window {
  int64_t h0, h1, w0, w1, padded_size;

  __device__ Window(const PoolGeometry& g, int64_t ph, int64_t pw) {
    h0 = ph * g.stride_h - g.pad_h;
    w0 = pw * g.stride_w - g.pad_w;
    h1 = min(h0 + g.kernel_h, g.height + g.pad_h);
    w1 = min(w0 + g.kernel_w, g.width + g.pad_w);
    padded_size = (h1 - h0) * (w1 - w0);
    h0 = max(h0, int64_t{0});
    w0 = max(w0, int64_t{0});
    h1 = min(h1, g.height);
    w1 = min(w1, g.width);
  }
};

// The index in `plane` of window (ph, pw)'s first maximum (-1: no value above -FLT_MAX), the
// maximum in *best (-FLT_MAX then, as Caffe's top).
template <typename T>
__device__ int64_t window_argmax(const PoolGeometry& g, const T* plane, int64_t ph, int64_t pw, T* best) {
  const Window win(g, ph, pw);
  T m = T(-FLT_MAX);
  int64_t at = -1;
  for (int64_t h = win.h0; h < win.h1; ++h) {
    for (int64_t w = win.w0; w < win.w1; ++w) {
      const T v = plane[h * g.width + w];
      if (v > m) {
        m = v;
        at = h * g.width + w;
      }
    }
  }
  *best = m;
  return at;
}

// The windows holding element (h, w): rows [ph0, ph1), columns [pw0, pw1) of the pooled plane.
struct WindowsOf {
  int64_t ph0, ph1, pw0, pw1;

  __device__ WindowsOf(const PoolGeometry& g, int64_t h, int64_t w) {
    ph0 = h + g.pad_h < g.kernel_h ? 0 : (h + g.pad_h - g.kernel_h) / g.stride_h + 1;
    ph1 = min((h + g.pad_h) / g.stride_h + 1, g.pooled_h);
    pw0 = w + g.pad_w < g.kernel_w ? 0 : (w + g.pad_w - g.kernel_w) / g.stride_w + 1;
    pw1 = min((w + g.pad_w) / g.stride_w + 1, g.pooled_w);
  }
};

template <typename T>
__global__ void max_pool_kernel(PoolGeometry g, const T* bottom, T* top) {
  const int64_t pooled = g.pooled_h * g.pooled_w;
  BLOBRT_CUDA_GRID_STRIDE(i, g.top_count()) {
    const int64_t pw = i % g.pooled_w, ph = i / g.pooled_w % g.pooled_h, p = i / pooled;
    T best;
    window_argmax(g, bottom + p * g.height * g.width, ph, pw, &best);
    top[i] = best;
  }
}

template <typename T>
__global__ void ave_pool_kernel(PoolGeometry g, const T* bottom, T* top) {
  const int64_t pooled = g.pooled_h * g.pooled_w;
  BLOBRT_CUDA_GRID_STRIDE(i, g.top_count()) {
    const int64_t pw = i % g.pooled_w, ph = i / g.pooled_w % g.pooled_h, p = i / pooled;
    const T* plane = bottom + p * g.height * g.width;
    const Window win(g, ph, pw);
    T sum = T(0);
    for (int64_t h = win.h0; h < win.h1; ++h) {
      for (int64_t w = win.w0; w < win.w1; ++w) sum += plane[h * g.width + w];
    }
    top[i] = sum / static_cast<T>(win.padded_size);
  }
}

template <typename T>
__global__ void max_pool_backward_kernel(PoolGeometry g, const T* bottom, const T* top_diff, T* bottom_diff) {
  BLOBRT_CUDA_GRID_STRIDE(i, g.bottom_count()) {
    const int64_t w = i % g.width, h = i / g.width % g.height, p = i / (g.width * g.height);
    const T* plane = bottom + p * g.height * g.width;
    const T* diff = top_diff + p * g.pooled_h * g.pooled_w;
    const WindowsOf of(g, h, w);
    T sum = T(0), best;
    for (int64_t ph = of.ph0; ph < of.ph1; ++ph) {
      for (int64_t pw = of.pw0; pw < of.pw1; ++pw) {
        if (window_argmax(g, plane, ph, pw, &best) == h * g.width + w) sum += diff[ph * g.pooled_w + pw];
      }
    }
    bottom_diff[i] = sum;
  }
}

template <typename T>
__global__ void ave_pool_backward_kernel(PoolGeometry g, const T* top_diff, T* bottom_diff) {
  BLOBRT_CUDA_GRID_STRIDE(i, g.bottom_count()) {
    const int64_t w = i % g.width, h = i / g.width % g.height, p = i / (g.width * g.height);
    const T* diff = top_diff + p * g.pooled_h * g.pooled_w;
    const WindowsOf of(g, h, w);
    T sum = T(0);
    for (int64_t ph = of.ph0; ph < of.ph1; ++ph) {
      for (int64_t pw = of.pw0; pw < of.pw1; ++pw) {
        sum += diff[ph * g.pooled_w + pw] / static_cast<T>(Window(g, ph, pw).padded_size);
      }
    }
    bottom_diff[i] = sum;
  }
}

}  // namespace

template <bool Max>
int pool_entry(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
               int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w, int64_t pad_h,
               int64_t pad_w, const void* bottom, int64_t bottom_offset, void* top, int64_t top_offset,
               blobrt_error* err) {
  const PoolGeometry g{planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w};
  return launch_in_precision(context, precision, g.top_count(), kThreads, Max ? "max_pool_kernel launch" : "ave_pool_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  if (Max) {
                    max_pool_kernel<T><<<blocks, kThreads, 0, stream>>>(g, at<T>(bottom, bottom_offset),
                                                                         at<T>(top, top_offset));
                  } else {
                    ave_pool_kernel<T><<<blocks, kThreads, 0, stream>>>(g, at<T>(bottom, bottom_offset),
                                                                         at<T>(top, top_offset));
                  }
                },
                err);
}
template int pool_entry<true>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);
template int pool_entry<false>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                               int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);

int max_pool_backward(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
                      int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                      int64_t pad_h, int64_t pad_w, const void* bottom, int64_t bottom_offset, const void* top_diff,
                      int64_t top_diff_offset, void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  const PoolGeometry g{planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w};
  return launch_in_precision(context, precision, g.bottom_count(), kThreads, "max_pool_backward_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  max_pool_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(
                      g, at<T>(bottom, bottom_offset), at<T>(top_diff, top_diff_offset),
                      at<T>(bottom_diff, bottom_diff_offset));
                },
                err);
}

int ave_pool_backward(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
                      int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                      int64_t pad_h, int64_t pad_w, const void* top_diff, int64_t top_diff_offset, void* bottom_diff,
                      int64_t bottom_diff_offset, blobrt_error* err) {
  const PoolGeometry g{planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w};
  return launch_in_precision(context, precision, g.bottom_count(), kThreads, "ave_pool_backward_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  ave_pool_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(
                      g, at<T>(top_diff, top_diff_offset), at<T>(bottom_diff, bottom_diff_offset));
                },
                err);
}

}  // namespace blobrt_cuda
