// The CUDA plugin's softmax operations: Caffe's softmax along an axis and its backward (plugin
// ABI 1.5, softmax_layer.cu), the softmax loss and its gradient (ABI 1.6,
// softmax_loss_layer.cu) and the top-k hits (ABI 1.8, accuracy_layer.cu), kernels of the
// plugin's own on the device's stream, computing what the host kernels
// (blobrt_kernels/softmax.hpp, softmax_loss.hpp, top_k_hits.hpp) and the OpenCL plugin's
// (softmax.cpp) do. One thread per (outer, inner) position, over its channels in the host
// kernels' order: the maximum, exp(x - max) and their sum, the division (backward: the dot
// product, then (dy - dot) * y); each position reads its channels before writing them, so the
// operations may run in place. Labels are read as label_class() reads them. Without these the
// portable Caffe build's Softmax, SoftmaxWithLoss and Accuracy took the host path through
// copies on the cuda backend wherever the Caffe-layers CUDA plugin is not installed. The core has checked the shapes, the ignore label (an int, or
// NaN: none) and the operands, and sends no call without output.
#include <cmath>
#include <cfloat>
#include <cstdint>

#include "context.hpp"
#include "device_math.cuh"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kLabelIgnored = -1, kLabelOutside = -2;

struct Shape {
  int64_t outer, channels, inner;

  __host__ __device__ int64_t positions() const { return outer * inner; }
  // Position q's first element; its channels follow every `inner` elements.
  __device__ int64_t first(int64_t q) const { return q / inner * channels * inner + q % inner; }
};

// The ignore label as the kernels compare it (the core has refused one that is not an int).
struct Ignore {
  bool any;
  int64_t label;

  static Ignore of(double ignore_label) {
    const bool any = !std::isnan(ignore_label);
    return {any, any ? static_cast<int64_t>(ignore_label) : 0};
  }
};

// Caffe's static_cast<int>(label), compared with the ignore label, then with the channels: the
// label's channel, kLabelIgnored or kLabelOutside (NaN, +-inf or beyond int included).
template <typename T>
__device__ int64_t label_class(T label, Ignore ignore, int64_t channels) {
  if (!(label >= T(-2147483648.0) && label < T(2147483648.0))) return kLabelOutside;
  const int64_t value = static_cast<int64_t>(label);
  if (ignore.any && value == ignore.label) return kLabelIgnored;
  return value >= 0 && value < channels ? value : kLabelOutside;
}

template <typename T>
__global__ void softmax_kernel(Shape s, const T* bottom, T* top) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t first = s.first(q), inner = s.inner;
    const T* x = bottom + first;
    T* y = top + first;
    T m = x[0];
    for (int64_t c = 1; c < s.channels; ++c) m = fmax_(m, x[c * inner]);
    T sum = T(0);
    for (int64_t c = 0; c < s.channels; ++c) {
      const T e = exp_(x[c * inner] - m);
      y[c * inner] = e;
      sum += e;
    }
    for (int64_t c = 0; c < s.channels; ++c) y[c * inner] /= sum;
  }
}

template <typename T>
__global__ void softmax_backward_kernel(Shape s, const T* top, const T* top_diff, T* bottom_diff) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t first = s.first(q), inner = s.inner;
    const T *y = top + first, *dy = top_diff + first;
    T* dx = bottom_diff + first;
    T dot = T(0);
    for (int64_t c = 0; c < s.channels; ++c) dot += dy[c * inner] * y[c * inner];
    for (int64_t c = 0; c < s.channels; ++c) dx[c * inner] = (dy[c * inner] - dot) * y[c * inner];
  }
}

template <typename T>
__global__ void softmax_loss_kernel(Shape s, const T* prob, const T* label, Ignore ignore, T* loss) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t l = label_class(label[q], ignore, s.channels);
    loss[q] = l == kLabelIgnored   ? T(0)
              : l == kLabelOutside ? T(NAN)
                                   : -log_(fmax_(prob[s.first(q) + l * s.inner], T(FLT_MIN)));
  }
}

template <typename T>
__global__ void softmax_loss_backward_kernel(Shape s, const T* prob, const T* label, Ignore ignore, T scale,
                                             T* bottom_diff) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t l = label_class(label[q], ignore, s.channels), first = s.first(q);
    for (int64_t c = 0; c < s.channels; ++c) {
      const int64_t e = first + c * s.inner;
      T d = l == kLabelIgnored ? T(0) : l == kLabelOutside ? T(NAN) : prob[e];
      if (c == l) d -= T(1);
      bottom_diff[e] = d * scale;
    }
  }
}

// Caffe's AccuracyForwardGPU count: the channels scoring at least the label's (its own
// included, so a tie counts against it), stopping once top_k are found; a hit when fewer.
template <typename T>
__global__ void top_k_hits_kernel(Shape s, const T* scores, const T* label, Ignore ignore, int64_t top_k, T* hits) {
  BLOBRT_CUDA_GRID_STRIDE(q, s.positions()) {
    const int64_t l = label_class(label[q], ignore, s.channels);
    const T* x = scores + s.first(q);
    T hit = l == kLabelIgnored ? T(0) : T(NAN);
    if (l >= 0) {
      const T truth = x[l * s.inner];
      int64_t better = -1;
      for (int64_t c = 0; c < s.channels && better < top_k; ++c) better += x[c * s.inner] >= truth;
      hit = better < top_k ? T(1) : T(0);
    }
    hits[q] = hit;
  }
}

}  // namespace

int softmax(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* bottom,
            int64_t bottom_offset, void* top, int64_t top_offset, blobrt_error* err) {
  const Shape s{outer, channels, inner};
  return launch_in_precision(context, precision, s.positions(), kThreads, "softmax_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  softmax_kernel<T><<<blocks, kThreads, 0, stream>>>(s, at<T>(bottom, bottom_offset),
                                                                      at<T>(top, top_offset));
                },
                err);
}

int softmax_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                     const void* top, int64_t top_offset, const void* top_diff, int64_t top_diff_offset,
                     void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  const Shape s{outer, channels, inner};
  return launch_in_precision(context, precision, s.positions(), kThreads, "softmax_backward_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  softmax_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(
                      s, at<T>(top, top_offset), at<T>(top_diff, top_diff_offset),
                      at<T>(bottom_diff, bottom_diff_offset));
                },
                err);
}

int softmax_loss(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* prob,
                 int64_t prob_offset, const void* label, int64_t label_offset, double ignore_label, void* loss,
                 int64_t loss_offset, blobrt_error* err) {
  const Shape s{outer, channels, inner};
  const Ignore ignore = Ignore::of(ignore_label);
  return launch_in_precision(context, precision, s.positions(), kThreads, "softmax_loss_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  softmax_loss_kernel<T><<<blocks, kThreads, 0, stream>>>(
                      s, at<T>(prob, prob_offset), at<T>(label, label_offset), ignore, at<T>(loss, loss_offset));
                },
                err);
}

int softmax_loss_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                          const void* prob, int64_t prob_offset, const void* label, int64_t label_offset,
                          double ignore_label, double scale, void* bottom_diff, int64_t bottom_diff_offset,
                          blobrt_error* err) {
  const Shape s{outer, channels, inner};
  const Ignore ignore = Ignore::of(ignore_label);
  return launch_in_precision(context, precision, s.positions(), kThreads, "softmax_loss_backward_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  softmax_loss_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(
                      s, at<T>(prob, prob_offset), at<T>(label, label_offset), ignore, static_cast<T>(scale),
                      at<T>(bottom_diff, bottom_diff_offset));
                },
                err);
}

int top_k_hits(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* scores,
               int64_t scores_offset, const void* label, int64_t label_offset, double ignore_label, int64_t top_k,
               void* hits, int64_t hits_offset, blobrt_error* err) {
  const Shape s{outer, channels, inner};
  const Ignore ignore = Ignore::of(ignore_label);
  return launch_in_precision(context, precision, s.positions(), kThreads, "top_k_hits_kernel launch",
                [&](auto zero, unsigned blocks, cudaStream_t stream) {
                  using T = decltype(zero);
                  top_k_hits_kernel<T><<<blocks, kThreads, 0, stream>>>(s, at<T>(scores, scores_offset),
                                                                         at<T>(label, label_offset), ignore, top_k,
                                                                         at<T>(hits, hits_offset));
                },
                err);
}

}  // namespace blobrt_cuda
