// The CUDA plugin's im2col_3d and col2im_3d (plugin ABI 1.12): Caffe's im2col_nd_gpu and
// col2im_nd_gpu over up to three spatial axes, kernels of the plugin's own on the device's
// stream, computing what the host kernels (blobrt_kernels/im2col_3d.hpp) and the OpenCL
// plugin's (im2col_3d.cpp) do. im2col_3d: one thread per (channel, output position), writing
// its kernel_d x kernel_h x kernel_w column elements; col2im_3d: one thread per image element,
// gathering the column elements that came from it in the host kernel's order (kernel offsets
// in row order), so no two threads write one element and the sums are the host's bits, no
// atomics. The core has checked the geometry and the operands, and sends no call without
// output.
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

// The geometry, axis by axis (0 depth, 1 height, 2 width).
struct Geometry3d {
  int64_t channels, image[3], out[3], kernel[3], pad[3], stride[3], dilation[3];

  __host__ __device__ int64_t positions() const { return out[0] * out[1] * out[2]; }
  __host__ __device__ int64_t image_size() const { return image[0] * image[1] * image[2]; }
};

template <typename T>
__global__ void im2col_3d_kernel(Geometry3d g, const T* im, T* col) {
  const int64_t positions = g.positions();
  BLOBRT_CUDA_GRID_STRIDE(index, g.channels * positions) {
    const int64_t x = index % g.out[2], y = index / g.out[2] % g.out[1];
    const int64_t z = index / (g.out[2] * g.out[1]) % g.out[0], c = index / positions;
    const T* image = im + c * g.image_size();
    T* out = col + c * g.kernel[0] * g.kernel[1] * g.kernel[2] * positions + (z * g.out[1] + y) * g.out[2] + x;
    for (int64_t i = 0; i < g.kernel[0]; ++i) {
      const int64_t d = z * g.stride[0] - g.pad[0] + i * g.dilation[0];
      for (int64_t j = 0; j < g.kernel[1]; ++j) {
        const int64_t h = y * g.stride[1] - g.pad[1] + j * g.dilation[1];
        for (int64_t k = 0; k < g.kernel[2]; ++k, out += positions) {
          const int64_t w = x * g.stride[2] - g.pad[2] + k * g.dilation[2];
          const bool inside = d >= 0 && d < g.image[0] && h >= 0 && h < g.image[1] && w >= 0 && w < g.image[2];
          *out = inside ? image[(d * g.image[1] + h) * g.image[2] + w] : T(0);
        }
      }
    }
  }
}

// The output index along an axis whose window reaches `coordinate` at kernel offset i, or -1.
__device__ int64_t position_of(const Geometry3d& g, int axis, int64_t coordinate, int64_t i) {
  const int64_t p = coordinate + g.pad[axis] - i * g.dilation[axis];
  if (p < 0 || p % g.stride[axis] != 0 || p / g.stride[axis] >= g.out[axis]) return -1;
  return p / g.stride[axis];
}

template <typename T>
__global__ void col2im_3d_kernel(Geometry3d g, const T* col, T* im) {
  const int64_t positions = g.positions();
  BLOBRT_CUDA_GRID_STRIDE(index, g.channels * g.image_size()) {
    const int64_t w = index % g.image[2], h = index / g.image[2] % g.image[1];
    const int64_t d = index / (g.image[2] * g.image[1]) % g.image[0], c = index / g.image_size();
    const T* columns = col + c * g.kernel[0] * g.kernel[1] * g.kernel[2] * positions;
    T sum = T(0);
    for (int64_t i = 0; i < g.kernel[0]; ++i) {
      const int64_t z = position_of(g, 0, d, i);
      if (z < 0) continue;
      for (int64_t j = 0; j < g.kernel[1]; ++j) {
        const int64_t y = position_of(g, 1, h, j);
        if (y < 0) continue;
        for (int64_t k = 0; k < g.kernel[2]; ++k) {
          const int64_t x = position_of(g, 2, w, k);
          if (x < 0) continue;
          sum += columns[((i * g.kernel[1] + j) * g.kernel[2] + k) * positions + (z * g.out[1] + y) * g.out[2] + x];
        }
      }
    }
    im[index] = sum;
  }
}

}  // namespace

template <bool ToImage>
int conv_3d_entry(void* context, int32_t precision, int64_t channels, int64_t depth, int64_t height, int64_t width,
                  int64_t out_depth, int64_t out_height, int64_t out_width, int64_t kernel_d, int64_t kernel_h,
                  int64_t kernel_w, int64_t pad_d, int64_t pad_h, int64_t pad_w, int64_t stride_d, int64_t stride_h,
                  int64_t stride_w, int64_t dilation_d, int64_t dilation_h, int64_t dilation_w, const void* from,
                  int64_t from_offset, void* to, int64_t to_offset, blobrt_error* err) {
  const Geometry3d g{channels,
                     {depth, height, width},
                     {out_depth, out_height, out_width},
                     {kernel_d, kernel_h, kernel_w},
                     {pad_d, pad_h, pad_w},
                     {stride_d, stride_h, stride_w},
                     {dilation_d, dilation_h, dilation_w}};
  const int64_t work = ToImage ? channels * g.image_size() : channels * g.positions();
  return launch_in_precision(context, precision, work, kThreads,
                             ToImage ? "col2im_3d_kernel launch" : "im2col_3d_kernel launch",
                             [&](auto zero, unsigned blocks, cudaStream_t stream) {
                               using T = decltype(zero);
                               if (ToImage) {
                                 col2im_3d_kernel<T><<<blocks, kThreads, 0, stream>>>(g, at<T>(from, from_offset),
                                                                                      at<T>(to, to_offset));
                               } else {
                                 im2col_3d_kernel<T><<<blocks, kThreads, 0, stream>>>(g, at<T>(from, from_offset),
                                                                                      at<T>(to, to_offset));
                               }
                             },
                             err);
}
template int conv_3d_entry<false>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);
template int conv_3d_entry<true>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                 int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                 int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);

}  // namespace blobrt_cuda
