// The CUDA plugin's copy_rows and channel_affine (plugin ABI 1.6), kernels of the plugin's own
// on the device's stream. Without them the portable Caffe build's Concat, Slice, Crop, Tile
// and LSTMUnit (copy_rows) and Scale, Bias, PReLU, ContrastiveLoss and LSTMUnit
// (channel_affine) took the host path through copies on the cuda backend.
// copy_rows: one thread per element copied, as 32- or 64-bit words (a copy, not arithmetic:
// NaN payloads and -0 kept, as the host's memcpy keeps them). channel_affine: one thread per
// element, each form in its own expression as the host kernel (blobrt_kernels/
// channel_affine.hpp), the multiply and the add rounded apart (no fused multiply-add, which
// nvcc would otherwise make of x * scale + bias): the host's bits (but for a NaN's payload:
// the GPU's arithmetic makes the canonical NaN). The core has checked the
// sizes and operands and sends no call without output.
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

template <typename Word>
__global__ void copy_rows_kernel(int64_t rows, int64_t columns, const Word* src, int64_t src_stride, Word* dst,
                                 int64_t dst_stride) {
  const int64_t count = rows * columns, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / columns, column = i % columns;
    dst[r * dst_stride + column] = src[r * src_stride + column];
  }
}

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

template <typename T>
__global__ void channel_affine_kernel(int64_t outer, int64_t channels, int64_t inner, const T* bottom,
                                      const T* scale, const T* bias, T* top) {
  const int64_t count = outer * channels * inner, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t c = i / inner % channels;
    const T x = bottom[i];
    T y = x;
    if (scale && bias) {
      y = add_rn(mul_rn(x, scale[c]), bias[c]);
    } else if (scale) {
      y = mul_rn(x, scale[c]);
    } else if (bias) {
      y = add_rn(x, bias[c]);
    }
    top[i] = y;
  }
}

}  // namespace

int copy_rows(void* context, int32_t precision, int64_t rows, int64_t columns, const void* src, int64_t src_offset,
              int64_t src_stride, void* dst, int64_t dst_offset, int64_t dst_stride, blobrt_error* err) {
  Context* c = as_context(context);
  if (rows == 0 || columns == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  const unsigned blocks = grid_blocks(c, rows * columns, kThreads);
  if (precision == BLOBRT_FLOAT64) {
    copy_rows_kernel<unsigned long long><<<blocks, kThreads, 0, c->stream>>>(
        rows, columns, at<unsigned long long>(src, src_offset), src_stride, at<unsigned long long>(dst, dst_offset),
        dst_stride);
  } else {
    copy_rows_kernel<uint32_t><<<blocks, kThreads, 0, c->stream>>>(rows, columns, at<uint32_t>(src, src_offset),
                                                                   src_stride, at<uint32_t>(dst, dst_offset),
                                                                   dst_stride);
  }
  CUDA_CHECK(cudaGetLastError(), "copy_rows_kernel launch");
  return BLOBRT_OK;
}

int channel_affine(void* context, int32_t precision, int64_t outer, int64_t channels, int64_t inner,
                   const void* bottom, int64_t bottom_offset, const void* scale, int64_t scale_offset,
                   const void* bias, int64_t bias_offset, void* top, int64_t top_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const int64_t count = outer * channels * inner;  // the core refused a product past 64 bits
  if (count == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  const unsigned blocks = grid_blocks(c, count, kThreads);
  if (precision == BLOBRT_FLOAT64) {
    channel_affine_kernel<double><<<blocks, kThreads, 0, c->stream>>>(
        outer, channels, inner, at<double>(bottom, bottom_offset), scale ? at<double>(scale, scale_offset) : nullptr,
        bias ? at<double>(bias, bias_offset) : nullptr, at<double>(top, top_offset));
  } else {
    channel_affine_kernel<float><<<blocks, kThreads, 0, c->stream>>>(
        outer, channels, inner, at<float>(bottom, bottom_offset), scale ? at<float>(scale, scale_offset) : nullptr,
        bias ? at<float>(bias, bias_offset) : nullptr, at<float>(top, top_offset));
  }
  CUDA_CHECK(cudaGetLastError(), "channel_affine_kernel launch");
  return BLOBRT_OK;
}

}  // namespace blobrt_cuda
