// The OpenCL plugin's gather_rows and scatter_add_rows (plugin ABI 1.8: Caffe's Embed and
// BatchReindex kernels), kernels of the plugin's own, blobrt_gather_rows_<f|d> and
// blobrt_scatter_add_rows_<f|d>, built at the first call. An index is read as
// blobrt_kernels/gather_rows.hpp's row_of() reads it. gather: one work-item per element
// written. scatter_add: one work-item per column, adding the rows in index order as the host
// kernel does, so the sums are the host's and no atomics are needed.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/gather_rows.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* gather_rows_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define BLOBRT_GATHER_ROWS_KERNELS(T, S)                                                          \
/* The index's row of the table, or -1 (row_of()). */                                             \
long blobrt_row_of_##S(T index, long table_rows) {                                                \
  if (!(index >= (T)-2147483648.0 && index < (T)2147483648.0)) return -1;                         \
  const long row = (long)index;                                                                   \
  return row >= 0 && row < table_rows ? row : -1;                                                 \
}                                                                                                 \
__kernel void blobrt_gather_rows_##S(long rows, long columns, long table_rows,                    \
                                     __global const T* index, long index_offset,                  \
                                     __global const T* table, long table_offset,                  \
                                     __global T* dst, long dst_offset) {                          \
  const long i = get_global_id(0);                                                                \
  if (i >= rows * columns) return;                                                                \
  const long r = i / columns, row = blobrt_row_of_##S(index[index_offset + r], table_rows);        \
  dst[dst_offset + i] = row < 0 ? (T)NAN : table[table_offset + row * columns + (i - r * columns)]; \
}                                                                                                 \
__kernel void blobrt_scatter_add_rows_##S(long rows, long columns, long table_rows,               \
                                          __global const T* index, long index_offset,             \
                                          __global const T* src, long src_offset,                 \
                                          __global T* table, long table_offset) {                 \
  const long c = get_global_id(0);                                                                \
  if (c >= columns) return;                                                                       \
  for (long r = 0; r < rows; ++r) {                                                               \
    const long row = blobrt_row_of_##S(index[index_offset + r], table_rows);                      \
    if (row >= 0) table[table_offset + row * columns + c] += src[src_offset + r * columns + c];    \
  }                                                                                               \
}

BLOBRT_GATHER_ROWS_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_GATHER_ROWS_KERNELS(double, d)
#endif
)CLC";
}

// The cached kernel `name` of precision's form: [0 gather, 1 scatter_add][precision].
int kernel_for(Context* c, int which, int32_t precision, cl_kernel* kernel, blobrt_error* err) {
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  static const char* const names[2][2] = {{"blobrt_gather_rows_f", "blobrt_gather_rows_d"},
                                          {"blobrt_scatter_add_rows_f", "blobrt_scatter_add_rows_d"}};
  return cached_kernel(c, &c->gather_rows_program, gather_rows_kernel_source(), "gather_rows kernels",
                       &c->gather_rows_kernels[which][p], names[which][p], kernel, err);
}

}  // namespace

void release_gather_rows(Context* c) { release_cached_kernels(&c->gather_rows_program, c->gather_rows_kernels); }

int gather_rows(void* context, int32_t precision, int64_t rows, int64_t columns, int64_t table_rows,
                const void* index, int64_t index_offset, const void* table, int64_t table_offset, void* dst,
                int64_t dst_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::gather_rows>{
                                 precision, rows, columns, table_rows, index, index_offset, table, table_offset, dst,
                                 dst_offset},
                             err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  cl_kernel kernel = nullptr;
  if (int s = kernel_for(c, 0, precision, &kernel, err)) return s;
  const cl_int status = set_kernel_args(kernel, 0, cl_long{rows}, cl_long{columns}, cl_long{table_rows},
                                        as_mem(index), cl_long{index_offset}, as_mem(table), cl_long{table_offset},
                                        as_mem(dst), cl_long{dst_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(gather_rows)", status);
  return enqueue_1d(c, kernel, rows * columns, "gather_rows", err);
}

int scatter_add_rows(void* context, int32_t precision, int64_t rows, int64_t columns, int64_t table_rows,
                     const void* index, int64_t index_offset, const void* src, int64_t src_offset, void* table,
                     int64_t table_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (int s = check_operands(blobrt_kernels::MathArgs<blobrt_kernels::MathOp::scatter_add_rows>{
                                 precision, rows, columns, table_rows, index, index_offset, src, src_offset, table,
                                 table_offset},
                             err)) {
    return s;
  }
  if (rows == 0 || columns == 0) return BLOBRT_OK;
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  cl_kernel kernel = nullptr;
  if (int s = kernel_for(c, 1, precision, &kernel, err)) return s;
  const cl_int status = set_kernel_args(kernel, 0, cl_long{rows}, cl_long{columns}, cl_long{table_rows},
                                        as_mem(index), cl_long{index_offset}, as_mem(src), cl_long{src_offset},
                                        as_mem(table), cl_long{table_offset});
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(scatter_add_rows)", status);
  return enqueue_1d(c, kernel, columns, "scatter_add_rows", err);
}

}  // namespace blobrt_opencl
