// The OpenCL plugin's bernoulli_mask (plugin ABI 1.10: the mask of Caffe's Dropout drawn on
// the device), a kernel of the plugin's own, blobrt_bernoulli_mask_<f|d>, built at the first
// call: one work-item per block of four words of the Philox4x32-10 stream, writing the mask
// elements of the block's words that the call covers (the blocks at either end may be
// partial), so each block is computed once. The generator is blobrt_kernels::Philox4x32
// (bernoulli_mask.hpp) in OpenCL C: 32 x 32-bit products by mul_hi, the same words on every
// device (the conformance suite compares them bit for bit).
#include <cstdint>
#include <mutex>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/bernoulli_mask.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* bernoulli_mask_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Philox4x32-10: block b of the stream keyed by (k0, k1) is this of {b low, b high, 0, 0}. */
uint4 blobrt_philox4x32_10(uint4 c, uint k0, uint k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = (uint4)(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
  }
  return c;
}

#define BLOBRT_BERNOULLI_MASK_KERNEL(T, S)                                                        \
__kernel void blobrt_bernoulli_mask_##S(ulong seed, ulong counter, ulong n, uint threshold,      \
                                        __global T* mask, long mask_offset) {                    \
  const ulong block = (counter >> 2) + get_global_id(0);                                          \
  const ulong first = max(block << 2, counter), end = min((block << 2) + 4, counter + n);        \
  const uint4 w = blobrt_philox4x32_10((uint4)((uint)block, (uint)(block >> 32), 0u, 0u),       \
                                       (uint)seed, (uint)(seed >> 32));                          \
  const uint words[4] = {w.x, w.y, w.z, w.w};                                                    \
  for (ulong i = first; i < end; ++i) {                                                           \
    mask[mask_offset + (long)(i - counter)] = words[i & 3] > threshold ? (T)1 : (T)0;             \
  }                                                                                               \
}

BLOBRT_BERNOULLI_MASK_KERNEL(float, f)
#ifdef HAVE_FP64
BLOBRT_BERNOULLI_MASK_KERNEL(double, d)
#endif
)CLC";
}

}  // namespace

void release_bernoulli_mask(Context* c) {
  release_cached_kernels(&c->bernoulli_mask_program, c->bernoulli_mask_kernels);
}

int bernoulli_mask(void* context, int32_t precision, int64_t n, int64_t seed, int64_t counter, int64_t threshold,
                   void* mask, int64_t mask_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::bernoulli_mask>{
                                 precision, n, seed, counter, threshold, mask, mask_offset},
                             err)) {
    return s;
  }
  if (n == 0) return BLOBRT_OK;
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  cl_kernel kernel = nullptr;
  if (int s = cached_kernel(c, &c->bernoulli_mask_program, bernoulli_mask_kernel_source(), "bernoulli_mask kernels",
                            &c->bernoulli_mask_kernels[0][p], p ? "blobrt_bernoulli_mask_d" : "blobrt_bernoulli_mask_f",
                            &kernel, err)) {
    return s;
  }
  const auto first = static_cast<cl_ulong>(counter), end = first + static_cast<cl_ulong>(n);
  const cl_int status = set_kernel_args(kernel, 0, static_cast<cl_ulong>(seed), first, static_cast<cl_ulong>(n),
                                        static_cast<cl_uint>(threshold), as_mem(mask), cl_long{mask_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(bernoulli_mask)", status);
  const auto blocks = static_cast<int64_t>(((end - 1) >> 2) - (first >> 2) + 1);
  return enqueue_1d(c, kernel, blocks, "bernoulli_mask", err);
}

}  // namespace blobrt_opencl
