// The OpenCL plugin's softmax operations: Caffe's softmax along an axis and its backward
// (plugin ABI 1.5, softmax_layer.cu's kernels) and the softmax loss and its gradient (ABI 1.6,
// softmax_loss_layer.cu's), as kernels of the plugin's own, blobrt_softmax[_loss][_backward]_<f|d>,
// built once per context at the first call. One work-item per (outer, inner) position, over
// its channels in the host kernels' order (blobrt_kernels/softmax.hpp): the maximum,
// exp(x - max) and their sum, the division (backward: the dot product, then (dy - dot) * y);
// each position reads its channels before writing them, so the operations may run in place.
// The loss kernels read the position's label as blobrt_kernels/softmax_loss.hpp's
// label_class() does.
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/softmax.hpp"
#include "blobrt_kernels/softmax_loss.hpp"
#include "blobrt_kernels/top_k_hits.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* softmax_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define BLOBRT_SOFTMAX_KERNELS(T, S)                                                              \
__kernel void blobrt_softmax_##S(long outer, long channels, long inner, __global const T* bottom, \
                                 long bottom_offset, __global T* top, long top_offset) {         \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long first = q / inner * channels * inner + q % inner;                                    \
  __global const T* x = bottom + bottom_offset + first;                                           \
  __global T* y = top + top_offset + first;                                                       \
  T m = x[0];                                                                                     \
  for (long c = 1; c < channels; ++c) m = fmax(m, x[c * inner]);                                  \
  T sum = (T)0;                                                                                   \
  for (long c = 0; c < channels; ++c) {                                                           \
    const T e = exp(x[c * inner] - m);                                                            \
    y[c * inner] = e;                                                                             \
    sum += e;                                                                                     \
  }                                                                                               \
  for (long c = 0; c < channels; ++c) y[c * inner] /= sum;                                        \
}                                                                                                 \
__kernel void blobrt_softmax_backward_##S(long outer, long channels, long inner,                  \
                                          __global const T* top, long top_offset,                 \
                                          __global const T* top_diff, long top_diff_offset,       \
                                          __global T* bottom_diff, long bottom_diff_offset) {     \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long first = q / inner * channels * inner + q % inner;                                    \
  __global const T* y = top + top_offset + first;                                                 \
  __global const T* dy = top_diff + top_diff_offset + first;                                      \
  __global T* dx = bottom_diff + bottom_diff_offset + first;                                      \
  T dot = (T)0;                                                                                   \
  for (long c = 0; c < channels; ++c) dot += dy[c * inner] * y[c * inner];                        \
  for (long c = 0; c < channels; ++c) dx[c * inner] = (dy[c * inner] - dot) * y[c * inner];       \
}                                                                                                 \
/* The label's channel; -1 ignored, -2 outside (label_class()). */                                \
long blobrt_label_class_##S(T label, int has_ignore, long ignore, long channels) {                \
  if (!(label >= (T)-2147483648.0 && label < (T)2147483648.0)) return -2;                         \
  const long value = (long)label;                                                                 \
  if (has_ignore && value == ignore) return -1;                                                   \
  return value >= 0 && value < channels ? value : -2;                                             \
}                                                                                                 \
__kernel void blobrt_softmax_loss_##S(long outer, long channels, long inner,                      \
                                      __global const T* prob, long prob_offset,                   \
                                      __global const T* label, long label_offset,                 \
                                      int has_ignore, long ignore, __global T* loss,              \
                                      long loss_offset) {                                         \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long l = blobrt_label_class_##S(label[label_offset + q], has_ignore, ignore, channels);    \
  const long first = q / inner * channels * inner + q % inner;                                    \
  loss[loss_offset + q] = l == -1 ? (T)0                                                          \
                        : l == -2 ? (T)NAN                                                        \
                                  : -log(fmax(prob[prob_offset + first + l * inner], (T)FLT_MIN)); \
}                                                                                                 \
__kernel void blobrt_softmax_loss_backward_##S(long outer, long channels, long inner,             \
                                               __global const T* prob, long prob_offset,          \
                                               __global const T* label, long label_offset,        \
                                               int has_ignore, long ignore, T scale,              \
                                               __global T* diff, long diff_offset) {              \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long l = blobrt_label_class_##S(label[label_offset + q], has_ignore, ignore, channels);    \
  const long first = q / inner * channels * inner + q % inner;                                    \
  for (long c = 0; c < channels; ++c) {                                                           \
    const long e = first + c * inner;                                                             \
    T d = l == -1 ? (T)0 : l == -2 ? (T)NAN : prob[prob_offset + e];                              \
    if (c == l) d -= (T)1;                                                                        \
    diff[diff_offset + e] = d * scale;                                                            \
  }                                                                                               \
}                                                                                                 \
/* top_k_hits: Caffe's AccuracyForwardGPU count, the label's own channel included. */            \
__kernel void blobrt_top_k_hits_##S(long outer, long channels, long inner,                        \
                                    __global const T* scores, long scores_offset,                 \
                                    __global const T* label, long label_offset,                   \
                                    int has_ignore, long ignore, long top_k, __global T* hits,    \
                                    long hits_offset) {                                           \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long l = blobrt_label_class_##S(label[label_offset + q], has_ignore, ignore, channels);    \
  __global const T* s = scores + scores_offset + q / inner * channels * inner + q % inner;         \
  T hit = l == -1 ? (T)0 : (T)NAN;                                                                \
  if (l >= 0) {                                                                                   \
    const T truth = s[l * inner];                                                                 \
    long better = -1;                                                                             \
    for (long c = 0; c < channels && better < top_k; ++c) better += s[c * inner] >= truth;        \
    hit = better < top_k ? (T)1 : (T)0;                                                           \
  }                                                                                               \
  hits[hits_offset + q] = hit;                                                                    \
}

BLOBRT_SOFTMAX_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_SOFTMAX_KERNELS(double, d)
#endif
)CLC";
}

// The program's kernels, in Context::softmax_kernels' order.
enum SoftmaxKernel { kSoftmax, kSoftmaxBackward, kSoftmaxLoss, kSoftmaxLossBackward, kTopKHits };
const char* const kSoftmaxKernelNames[] = {"blobrt_softmax", "blobrt_softmax_backward", "blobrt_softmax_loss",
                                           "blobrt_softmax_loss_backward", "blobrt_top_k_hits"};

// The kernel `which` for a precision, made at its first call (under c->mutex).
int softmax_kernel(Context* c, SoftmaxKernel which, int32_t precision, cl_kernel* kernel, blobrt_error* err) {
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  const std::string name = std::string(kSoftmaxKernelNames[which]) + (p ? "_d" : "_f");
  return cached_kernel(c, &c->softmax_program, softmax_kernel_source(), "softmax kernels",
                       &c->softmax_kernels[which][p], name, kernel, err);
}


}  // namespace

void release_softmax(Context* c) { release_cached_kernels(&c->softmax_program, c->softmax_kernels); }

int softmax(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* bottom,
            int64_t bottom_offset, void* top, int64_t top_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const int64_t n = blobrt_kernels::SoftmaxShape{outer, channels, inner}.count();
  if (int s = check_extent(bottom, bottom_offset, n, element_size(precision), "bottom", "softmax", err)) return s;
  if (int s = check_extent(top, top_offset, n, element_size(precision), "top", "softmax", err)) return s;
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, kSoftmax, precision, &kernel, err)) return s;
  const cl_int status = set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, as_mem(bottom),
                                        cl_long{bottom_offset}, as_mem(top), cl_long{top_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax)", status);
  return enqueue_1d(c, kernel, outer * inner, "softmax", err);
}

int softmax_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                     const void* top, int64_t top_offset, const void* top_diff, int64_t top_diff_offset,
                     void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const int64_t n = blobrt_kernels::SoftmaxShape{outer, channels, inner}.count();
  const size_t element = element_size(precision);
  const char* call = "softmax_backward";
  if (int s = check_extent(top, top_offset, n, element, "top", call, err)) return s;
  if (int s = check_extent(top_diff, top_diff_offset, n, element, "top_diff", call, err)) return s;
  if (int s = check_extent(bottom_diff, bottom_diff_offset, n, element, "bottom_diff", call, err)) return s;
  std::lock_guard<std::mutex> lock(c->mutex);
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, kSoftmaxBackward, precision, &kernel, err)) return s;
  const cl_int status =
      set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, as_mem(top), cl_long{top_offset},
                      as_mem(top_diff), cl_long{top_diff_offset}, as_mem(bottom_diff), cl_long{bottom_diff_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax_backward)", status);
  return enqueue_1d(c, kernel, outer * inner, call, err);
}

namespace {

// The loss kernels' leading arguments (shape, prob, label, the ignore label as a flag and an
// int: the core has refused a non-integer one), after the extents are checked.
int set_loss_args(cl_kernel kernel, int64_t outer, int64_t channels, int64_t inner, const void* prob,
                  int64_t prob_offset, const void* label, int64_t label_offset, double ignore_label) {
  const cl_int has_ignore = std::isnan(ignore_label) ? 0 : 1;
  const cl_long ignore = has_ignore ? static_cast<cl_long>(ignore_label) : 0;
  return set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, as_mem(prob),
                         cl_long{prob_offset}, as_mem(label), cl_long{label_offset}, has_ignore, ignore);
}

}  // namespace

int softmax_loss(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* prob,
                 int64_t prob_offset, const void* label, int64_t label_offset, double ignore_label, void* loss,
                 int64_t loss_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const int64_t positions = outer * inner;
  const char* call = "softmax_loss";
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::softmax_loss>{
                                 precision, outer, channels, inner, prob, prob_offset, label, label_offset,
                                 ignore_label, loss, loss_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, kSoftmaxLoss, precision, &kernel, err)) return s;
  cl_int status = set_loss_args(kernel, outer, channels, inner, prob, prob_offset, label, label_offset, ignore_label);
  if (status == CL_SUCCESS) status = set_kernel_args(kernel, 9, as_mem(loss), cl_long{loss_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax_loss)", status);
  return enqueue_1d(c, kernel, positions, call, err);
}

int softmax_loss_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                          const void* prob, int64_t prob_offset, const void* label, int64_t label_offset,
                          double ignore_label, double scale, void* bottom_diff, int64_t bottom_diff_offset,
                          blobrt_error* err) {
  Context* c = as_context(context);
  const int64_t positions = outer * inner;
  const char* call = "softmax_loss_backward";
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::softmax_loss_backward>{
                                 precision, outer, channels, inner, prob, prob_offset, label, label_offset,
                                 ignore_label, scale, bottom_diff, bottom_diff_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, kSoftmaxLossBackward, precision, &kernel, err)) return s;
  cl_int status = set_loss_args(kernel, outer, channels, inner, prob, prob_offset, label, label_offset, ignore_label);
  if (status == CL_SUCCESS) {
    status = set_scalar_arg(kernel, 9, precision, scale);
  }
  if (status == CL_SUCCESS) {
    status = set_kernel_args(kernel, 10, as_mem(bottom_diff), cl_long{bottom_diff_offset});
  }
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax_loss_backward)", status);
  return enqueue_1d(c, kernel, positions, call, err);
}

int top_k_hits(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* scores,
               int64_t scores_offset, const void* label, int64_t label_offset, double ignore_label, int64_t top_k,
               void* hits, int64_t hits_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::top_k_hits>{
                                 precision, outer, channels, inner, scores, scores_offset, label, label_offset,
                                 ignore_label, top_k, hits, hits_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, kTopKHits, precision, &kernel, err)) return s;
  cl_int status =
      set_loss_args(kernel, outer, channels, inner, scores, scores_offset, label, label_offset, ignore_label);
  if (status == CL_SUCCESS) status = set_kernel_args(kernel, 9, cl_long{top_k}, as_mem(hits), cl_long{hits_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(top_k_hits)", status);
  return enqueue_1d(c, kernel, outer * inner, "top_k_hits", err);
}

}  // namespace blobrt_opencl
