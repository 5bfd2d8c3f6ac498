// The OpenCL plugin's softmax operations (plugin ABI 1.5): Caffe's softmax along an axis and
// its backward (softmax_layer.cu's kernels), as kernels of the plugin's own,
// blobrt_softmax[_backward]_<f|d>, built once per context at the first call. One work-item per
// (outer, inner) position, over its channels in the host kernel's order
// (blobrt_kernels/softmax.hpp): the maximum, exp(x - max) and their sum, the division
// (backward: the dot product, then (dy - dot) * y); each position reads its channels before
// writing them, so the operations may run in place.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/softmax.hpp"
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
}

BLOBRT_SOFTMAX_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_SOFTMAX_KERNELS(double, d)
#endif
)CLC";
}

// The kernel for (backward, precision), made at its first call (under c->mutex).
int softmax_kernel(Context* c, int backward, int precision, cl_kernel* kernel, blobrt_error* err) {
  const std::string name =
      std::string(backward ? "blobrt_softmax_backward" : "blobrt_softmax") + (precision ? "_d" : "_f");
  return cached_kernel(c, &c->softmax_program, softmax_kernel_source(), "softmax kernels",
                       &c->softmax_kernels[backward][precision], name, kernel, err);
}

}  // namespace

void release_softmax(Context* c) { release_cached_kernels(&c->softmax_program, c->softmax_kernels); }

int softmax(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner, const void* bottom,
            int64_t bottom_offset, void* top, int64_t top_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const blobrt_kernels::SoftmaxShape shape{outer, channels, inner};
  const size_t element = precision == BLOBRT_FLOAT64 ? sizeof(double) : sizeof(float);
  if (int s = check_extent(bottom, bottom_offset, shape.count(), element, "bottom", "softmax", err)) return s;
  if (int s = check_extent(top, top_offset, shape.count(), element, "top", "softmax", err)) return s;
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, 0, precision == BLOBRT_FLOAT64 ? 1 : 0, &kernel, err)) return s;
  const cl_int status = set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, as_mem(bottom),
                                        cl_long{bottom_offset}, as_mem(top), cl_long{top_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax)", status);
  const size_t global = static_cast<size_t>(outer * inner);
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
           "clEnqueueNDRangeKernel(softmax)");
  return BLOBRT_OK;
}

int softmax_backward(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                     const void* top, int64_t top_offset, const void* top_diff, int64_t top_diff_offset,
                     void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const blobrt_kernels::SoftmaxShape shape{outer, channels, inner};
  const size_t element = precision == BLOBRT_FLOAT64 ? sizeof(double) : sizeof(float);
  const char* call = "softmax_backward";
  if (int s = check_extent(top, top_offset, shape.count(), element, "top", call, err)) return s;
  if (int s = check_extent(top_diff, top_diff_offset, shape.count(), element, "top_diff", call, err)) return s;
  if (int s = check_extent(bottom_diff, bottom_diff_offset, shape.count(), element, "bottom_diff", call, err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  cl_kernel kernel = nullptr;
  if (int s = softmax_kernel(c, 1, precision == BLOBRT_FLOAT64 ? 1 : 0, &kernel, err)) return s;
  const cl_int status =
      set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, as_mem(top), cl_long{top_offset},
                      as_mem(top_diff), cl_long{top_diff_offset}, as_mem(bottom_diff), cl_long{bottom_diff_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax_backward)", status);
  const size_t global = static_cast<size_t>(outer * inner);
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
           "clEnqueueNDRangeKernel(softmax_backward)");
  return BLOBRT_OK;
}

}  // namespace blobrt_opencl
