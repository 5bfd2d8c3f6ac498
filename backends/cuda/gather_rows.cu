// The CUDA plugin's gather_rows and scatter_add_rows (plugin ABI 1.8: Caffe's Embed and
// BatchReindex kernels, and Tile's backward in blobrt-caffe), kernels of the plugin's own on
// the device's stream, computing what the host kernels (blobrt_kernels/gather_rows.hpp) do:
// gather one thread per element written, a row of NaN for an index that names no row;
// scatter-add one thread per column, adding the rows in index order, so the sums are the
// host's bit for bit and no two threads write one element (no atomics: deterministic, but an
// embedding of few columns runs nearly serially, as on OpenCL). The core has checked the
// sizes and operands and sends no call without output.
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

// blobrt_kernels::row_of on the device: Caffe's static_cast<int>(index), or -1 where that is
// not a row of the table (NaN, ±inf and what int cannot hold included).
template <typename T>
__device__ __forceinline__ int64_t row_of(T index, int64_t table_rows) {
  if (!(index >= T(-2147483648.0) && index < T(2147483648.0))) return -1;
  const auto row = static_cast<int64_t>(index);
  return row >= 0 && row < table_rows ? row : -1;
}

template <typename T>
__global__ void gather_rows_kernel(int64_t rows, int64_t columns, int64_t table_rows, const T* index, const T* table,
                                   T* dst) {
  const int64_t count = rows * columns, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t row = row_of(index[i / columns], table_rows);
    dst[i] = row < 0 ? T(NAN) : table[row * columns + i % columns];
  }
}

template <typename T>
__global__ void scatter_add_rows_kernel(int64_t rows, int64_t columns, int64_t table_rows, const T* index,
                                        const T* src, T* table) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns; c += step) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t row = row_of(index[r], table_rows);
      if (row >= 0) table[row * columns + c] += src[r * columns + c];
    }
  }
}

template <typename T>
void launch_gather(Context* c, int64_t rows, int64_t columns, int64_t table_rows, const void* index,
                   int64_t index_offset, const void* table, int64_t table_offset, void* dst, int64_t dst_offset) {
  gather_rows_kernel<T><<<grid_blocks(c, rows * columns, kThreads), kThreads, 0, c->stream>>>(
      rows, columns, table_rows, at<T>(index, index_offset), at<T>(table, table_offset), at<T>(dst, dst_offset));
}

template <typename T>
void launch_scatter(Context* c, int64_t rows, int64_t columns, int64_t table_rows, const void* index,
                    int64_t index_offset, const void* src, int64_t src_offset, void* table, int64_t table_offset) {
  scatter_add_rows_kernel<T><<<grid_blocks(c, columns, kThreads), kThreads, 0, c->stream>>>(
      rows, columns, table_rows, at<T>(index, index_offset), at<T>(src, src_offset), at<T>(table, table_offset));
}

}  // namespace

int gather_rows(void* context, int32_t precision, int64_t rows, int64_t columns, int64_t table_rows,
                const void* index, int64_t index_offset, const void* table, int64_t table_offset, void* dst,
                int64_t dst_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (rows == 0 || columns == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  if (precision == BLOBRT_FLOAT64) {
    launch_gather<double>(c, rows, columns, table_rows, index, index_offset, table, table_offset, dst, dst_offset);
  } else {
    launch_gather<float>(c, rows, columns, table_rows, index, index_offset, table, table_offset, dst, dst_offset);
  }
  CUDA_CHECK(cudaGetLastError(), "gather_rows_kernel launch");
  return BLOBRT_OK;
}

int scatter_add_rows(void* context, int32_t precision, int64_t rows, int64_t columns, int64_t table_rows,
                     const void* index, int64_t index_offset, const void* src, int64_t src_offset, void* table,
                     int64_t table_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (rows == 0 || columns == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  if (precision == BLOBRT_FLOAT64) {
    launch_scatter<double>(c, rows, columns, table_rows, index, index_offset, src, src_offset, table, table_offset);
  } else {
    launch_scatter<float>(c, rows, columns, table_rows, index, index_offset, src, src_offset, table, table_offset);
  }
  CUDA_CHECK(cudaGetLastError(), "scatter_add_rows_kernel launch");
  return BLOBRT_OK;
}

}  // namespace blobrt_cuda
