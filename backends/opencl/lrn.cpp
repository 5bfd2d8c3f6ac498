// The OpenCL plugin's local response normalization across channels (plugin ABI 1.6, Caffe's
// lrn_layer.cu kernels): lrn_scale and lrn_backward as kernels of the plugin's own,
// blobrt_lrn_<scale|backward>_<f|d>, built once per context at the first call. One
// work-item per (outer, inner) position, over its channels with the running window sum in
// the host kernels' order (blobrt_kernels/lrn.hpp).
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/lrn.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* lrn_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define BLOBRT_LRN_KERNELS(T, S)                                                                  \
__kernel void blobrt_lrn_scale_##S(long outer, long channels, long inner, long size,             \
                                   T alpha_over_size, T k, __global const T* bottom,             \
                                   long bottom_offset, __global T* scale, long scale_offset) {   \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long first = q / inner * channels * inner + q % inner;                                    \
  __global const T* x = bottom + bottom_offset + first;                                           \
  __global T* y = scale + scale_offset + first;                                                   \
  const long post_pad = size - (size - 1) / 2 - 1;                                                \
  T accum = (T)0;                                                                                 \
  for (long head = 0; head < channels + post_pad; ++head) {                                       \
    if (head < channels) accum += x[head * inner] * x[head * inner];                              \
    if (head - size >= 0) accum -= x[(head - size) * inner] * x[(head - size) * inner];           \
    if (head - post_pad >= 0) y[(head - post_pad) * inner] = k + accum * alpha_over_size;         \
  }                                                                                               \
}                                                                                                 \
__kernel void blobrt_lrn_backward_##S(long outer, long channels, long inner, long size,          \
                                      T negative_beta, T cache_ratio,                             \
                                      __global const T* bottom, long bottom_offset,               \
                                      __global const T* top, long top_offset,                     \
                                      __global const T* scale, long scale_offset,                 \
                                      __global const T* top_diff, long top_diff_offset,           \
                                      __global T* bottom_diff, long bottom_diff_offset) {         \
  const long q = get_global_id(0);                                                                \
  if (q >= outer * inner) return;                                                                 \
  const long first = q / inner * channels * inner + q % inner;                                    \
  __global const T* x = bottom + bottom_offset + first;                                           \
  __global const T* y = top + top_offset + first;                                                 \
  __global const T* s = scale + scale_offset + first;                                             \
  __global const T* dy = top_diff + top_diff_offset + first;                                      \
  __global T* dx = bottom_diff + bottom_diff_offset + first;                                      \
  const long post_pad = size - (size - 1) / 2 - 1;                                                \
  T accum = (T)0;                                                                                 \
  for (long head = 0; head < channels + post_pad; ++head) {                                       \
    if (head < channels) accum += dy[head * inner] * y[head * inner] / s[head * inner];           \
    if (head - size >= 0) {                                                                       \
      const long o = (head - size) * inner;                                                       \
      accum -= dy[o] * y[o] / s[o];                                                               \
    }                                                                                             \
    if (head - post_pad >= 0) {                                                                   \
      const long e = (head - post_pad) * inner;                                                   \
      dx[e] = dy[e] * pow(s[e], negative_beta) - cache_ratio * x[e] * accum;                      \
    }                                                                                             \
  }                                                                                               \
}

BLOBRT_LRN_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_LRN_KERNELS(double, d)
#endif
)CLC";
}

// The kernel (0 lrn_scale, 1 lrn_backward) for a precision, made at its first call (under
// c->mutex).
int lrn_kernel(Context* c, int backward, int32_t precision, cl_kernel* kernel, blobrt_error* err) {
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  const std::string name = std::string(backward ? "blobrt_lrn_backward" : "blobrt_lrn_scale") + (p ? "_d" : "_f");
  return cached_kernel(c, &c->lrn_program, lrn_kernel_source(), "lrn kernels", &c->lrn_kernels[backward][p], name,
                       kernel, err);
}

}  // namespace

void release_lrn(Context* c) { release_cached_kernels(&c->lrn_program, c->lrn_kernels); }

int lrn_scale(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, int64_t size,
              double alpha_over_size, double k, const void* bottom, int64_t bottom_offset, void* scale,
              int64_t scale_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::lrn_scale>{
                                 precision, outer, channels, inner, size, alpha_over_size, k, bottom, bottom_offset,
                                 scale, scale_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  cl_kernel kernel = nullptr;
  if (int s = lrn_kernel(c, 0, precision, &kernel, err)) return s;
  cl_int status = set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, cl_long{size});
  if (status == CL_SUCCESS) status = set_scalar_arg(kernel, 4, precision, alpha_over_size);
  if (status == CL_SUCCESS) status = set_scalar_arg(kernel, 5, precision, k);
  if (status == CL_SUCCESS) {
    status = set_kernel_args(kernel, 6, as_mem(bottom), cl_long{bottom_offset}, as_mem(scale), cl_long{scale_offset});
  }
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(lrn_scale)", status);
  return enqueue_1d(c, kernel, outer * inner, "lrn_scale", err);
}

int lrn_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, int64_t size,
                 double negative_beta, double cache_ratio, const void* bottom, int64_t bottom_offset, const void* top,
                 int64_t top_offset, const void* scale, int64_t scale_offset, const void* top_diff,
                 int64_t top_diff_offset, void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const char* call = "lrn_backward";
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::lrn_backward>{
                                 precision, outer, channels, inner, size, negative_beta, cache_ratio, bottom,
                                 bottom_offset, top, top_offset, scale, scale_offset, top_diff, top_diff_offset,
                                 bottom_diff, bottom_diff_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  cl_kernel kernel = nullptr;
  if (int s = lrn_kernel(c, 1, precision, &kernel, err)) return s;
  cl_int status = set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, cl_long{size});
  if (status == CL_SUCCESS) status = set_scalar_arg(kernel, 4, precision, negative_beta);
  if (status == CL_SUCCESS) status = set_scalar_arg(kernel, 5, precision, cache_ratio);
  if (status == CL_SUCCESS) {
    status = set_kernel_args(kernel, 6, as_mem(bottom), cl_long{bottom_offset}, as_mem(top), cl_long{top_offset},
                             as_mem(scale), cl_long{scale_offset}, as_mem(top_diff), cl_long{top_diff_offset},
                             as_mem(bottom_diff), cl_long{bottom_diff_offset});
  }
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(lrn_backward)", status);
  return enqueue_1d(c, kernel, outer * inner, call, err);
}

}  // namespace blobrt_opencl
