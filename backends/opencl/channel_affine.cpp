// The OpenCL plugin's channel_affine (plugin ABI 1.6: Caffe's Scale and Bias kernels):
// top = bottom * scale[c] + bias[c], either factor absent, a kernel of the plugin's own,
// blobrt_channel_affine_<f|d>, built at the first call. One work-item per element, each
// form in its own expression as the host kernel (blobrt_kernels/channel_affine.hpp).
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/channel_affine.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* channel_affine_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define BLOBRT_CHANNEL_AFFINE_KERNEL(T, S)                                                        \
__kernel void blobrt_channel_affine_##S(long outer, long channels, long inner,                     \
                                        __global const T* bottom, long bottom_offset,              \
                                        __global const T* scale, long scale_offset,                \
                                        __global const T* bias, long bias_offset,                  \
                                        __global T* top, long top_offset) {                        \
  const long i = get_global_id(0);                                                                 \
  if (i >= outer * channels * inner) return;                                                       \
  const long c = i / inner % channels;                                                             \
  const T x = bottom[bottom_offset + i];                                                           \
  T y;                                                                                             \
  if (scale && bias) y = x * scale[scale_offset + c] + bias[bias_offset + c];                      \
  else if (scale) y = x * scale[scale_offset + c];                                                 \
  else if (bias) y = x + bias[bias_offset + c];                                                    \
  else y = x;                                                                                      \
  top[top_offset + i] = y;                                                                         \
}

BLOBRT_CHANNEL_AFFINE_KERNEL(float, f)
#ifdef HAVE_FP64
BLOBRT_CHANNEL_AFFINE_KERNEL(double, d)
#endif
)CLC";
}

}  // namespace

void release_channel_affine(Context* c) {
  release_cached_kernels(&c->channel_affine_program, c->channel_affine_kernels);
}

int channel_affine(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                   const void* bottom, int64_t bottom_offset, const void* scale, int64_t scale_offset,
                   const void* bias, int64_t bias_offset, void* top, int64_t top_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const int64_t n = outer * channels * inner;  // the core refused a product past 64 bits
  const char* call = "channel_affine";
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::channel_affine>{
                                 precision, outer, channels, inner, bottom, bottom_offset, scale, scale_offset, bias,
                                 bias_offset, top, top_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  cl_kernel kernel = nullptr;
  if (int s = cached_kernel(c, &c->channel_affine_program, channel_affine_kernel_source(), "channel_affine kernels",
                            &c->channel_affine_kernels[0][p],
                            p ? "blobrt_channel_affine_d" : "blobrt_channel_affine_f", &kernel, err)) {
    return s;
  }
  // An absent factor is a null buffer argument, which OpenCL passes as a null pointer.
  const cl_int status = set_kernel_args(kernel, 0, cl_long{outer}, cl_long{channels}, cl_long{inner}, as_mem(bottom),
                                        cl_long{bottom_offset}, as_mem(scale), cl_long{scale_offset}, as_mem(bias),
                                        cl_long{bias_offset}, as_mem(top), cl_long{top_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(channel_affine)", status);
  return enqueue_1d(c, kernel, n, call, err);
}

}  // namespace blobrt_opencl
