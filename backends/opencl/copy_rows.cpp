// The OpenCL plugin's copy_rows (plugin ABI 1.6): rows of elements between strided layouts
// (Caffe's Concat and Slice kernels), a kernel of the plugin's own, blobrt_copy_rows_<u32|u64>,
// built at the first call. Elements are copied as 32- or 64-bit words: a copy needs no
// arithmetic, so the program builds without fp64. One work-item per element copied.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/copy_rows.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* copy_rows_kernel_source() {
  return R"CLC(
#define BLOBRT_COPY_ROWS_KERNEL(W, S)                                                         \
__kernel void blobrt_copy_rows_##S(long rows, long columns, __global const W* src,            \
                                   long src_offset, long src_stride, __global W* dst,         \
                                   long dst_offset, long dst_stride) {                        \
  const long i = get_global_id(0);                                                            \
  if (i >= rows * columns) return;                                                            \
  const long r = i / columns, c = i - r * columns;                                            \
  dst[dst_offset + r * dst_stride + c] = src[src_offset + r * src_stride + c];                \
}

BLOBRT_COPY_ROWS_KERNEL(uint, u32)
BLOBRT_COPY_ROWS_KERNEL(ulong, u64)
)CLC";
}

}  // namespace

void release_copy_rows(Context* c) { release_cached_kernels(&c->copy_rows_program, c->copy_rows_kernels); }

int copy_rows(void* context, int32_t precision, int64_t rows, int64_t columns, const void* src, int64_t src_offset,
              int64_t src_stride, void* dst, int64_t dst_offset, int64_t dst_stride, blobrt_error* err) {
  Context* c = as_context(context);
  const bool wide = precision == BLOBRT_FLOAT64;
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::copy_rows>{
                                 precision, rows, columns, src, src_offset, src_stride, dst, dst_offset, dst_stride},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  cl_kernel kernel = nullptr;
  if (int s = cached_kernel(c, &c->copy_rows_program, copy_rows_kernel_source(), "copy_rows kernels",
                            &c->copy_rows_kernels[0][wide ? 1 : 0], wide ? "blobrt_copy_rows_u64" : "blobrt_copy_rows_u32",
                            &kernel, err)) {
    return s;
  }
  const cl_int status =
      set_kernel_args(kernel, 0, cl_long{rows}, cl_long{columns}, as_mem(src), cl_long{src_offset},
                      cl_long{src_stride}, as_mem(dst), cl_long{dst_offset}, cl_long{dst_stride});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(copy_rows)", status);
  return enqueue_1d(c, kernel, rows * columns, "copy_rows", err);
}

}  // namespace blobrt_opencl
