// The CUDA plugin's im2col and col2im (plugin ABI 1.4): Caffe's im2col_gpu and col2im_gpu as
// kernels of the plugin's own, on the device's stream. Without them every convolution of
// Caffe's portable build on the cuda backend took the host path through copies (LeNet's
// `caffe time --gpu=0` 4.8 times the CUDA build's on an H200).
// im2col: one thread per (channel, output row, output column), writing its kernel_h x
// kernel_w column elements; col2im: one thread per image element, gathering the column
// elements that came from it in the host kernel's order (kernel row, then column:
// blobrt_kernels/im2col.hpp), so no two threads write the same element and the sums are the
// host's, bit for bit. The core has checked the geometry (kernel, stride and dilation at
// least 1, no product past 64 bits) and the operands, and sends no call without output.
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

struct Geometry {
  int64_t channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t out_h, out_w;
};

// Caffe's output extent (C's division); 0 where the kernel outgrows the padded image.
int64_t extent(int64_t size, int64_t pad, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t out = (size + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1;
  return out > 0 ? out : 0;
}

template <typename T>
__global__ void im2col_kernel(Geometry g, const T* im, T* col) {
  const int64_t plane = g.out_h * g.out_w, count = g.channels * plane;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count; index += stride) {
    const int64_t x = index % g.out_w, y = index / g.out_w % g.out_h, c = index / plane;
    const T* image = im + c * g.height * g.width;
    T* out = col + c * g.kernel_h * g.kernel_w * plane + y * g.out_w + x;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t r = y * g.stride_h - g.pad_h + i * g.dilation_h;
      for (int64_t j = 0; j < g.kernel_w; ++j, out += plane) {
        const int64_t q = x * g.stride_w - g.pad_w + j * g.dilation_w;
        *out = r >= 0 && r < g.height && q >= 0 && q < g.width ? image[r * g.width + q] : T(0);
      }
    }
  }
}

template <typename T>
__global__ void col2im_kernel(Geometry g, const T* col, T* im) {
  const int64_t plane = g.out_h * g.out_w, count = g.channels * g.height * g.width;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count; index += stride) {
    const int64_t w = index % g.width, h = index / g.width % g.height, c = index / (g.width * g.height);
    const T* columns = col + c * g.kernel_h * g.kernel_w * plane;
    T sum = T(0);
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t hp = h + g.pad_h - i * g.dilation_h;
      if (hp < 0 || hp % g.stride_h != 0 || hp / g.stride_h >= g.out_h) continue;
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t wp = w + g.pad_w - j * g.dilation_w;
        if (wp < 0 || wp % g.stride_w != 0 || wp / g.stride_w >= g.out_w) continue;
        sum += columns[(i * g.kernel_w + j) * plane + hp / g.stride_h * g.out_w + wp / g.stride_w];
      }
    }
    im[index] = sum;
  }
}

template <typename T>
void launch(Context* c, bool to_image, const Geometry& g, const void* from, int64_t from_offset, void* to,
            int64_t to_offset) {
  const int64_t work = to_image ? g.channels * g.height * g.width : g.channels * g.out_h * g.out_w;
  constexpr int kThreads = 256;
  const unsigned blocks = grid_blocks(c, work, kThreads);
  if (to_image) {
    col2im_kernel<T><<<blocks, kThreads, 0, c->stream>>>(g, at<T>(from, from_offset), at<T>(to, to_offset));
  } else {
    im2col_kernel<T><<<blocks, kThreads, 0, c->stream>>>(g, at<T>(from, from_offset), at<T>(to, to_offset));
  }
}

}  // namespace

// im2col (ToImage false: im into col) and col2im (true: col into im), as the OpenCL plugin's.
template <bool ToImage>
int conv_entry(void* context, int32_t precision, int64_t channels, int64_t height, int64_t width, int64_t kernel_h,
               int64_t kernel_w, int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
               int64_t dilation_h, int64_t dilation_w, const void* from, int64_t from_offset, void* to,
               int64_t to_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const Geometry g{channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h,
                   dilation_w, extent(height, pad_h, kernel_h, stride_h, dilation_h),
                   extent(width, pad_w, kernel_w, stride_w, dilation_w)};
  ON_DEVICE(c);
  if (precision == BLOBRT_FLOAT64) {
    launch<double>(c, ToImage, g, from, from_offset, to, to_offset);
  } else {
    launch<float>(c, ToImage, g, from, from_offset, to, to_offset);
  }
  CUDA_CHECK(cudaGetLastError(), ToImage ? "col2im_kernel launch" : "im2col_kernel launch");
  return BLOBRT_OK;
}
template int conv_entry<false>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                               int64_t, int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t,
                               blobrt_error*);
template int conv_entry<true>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t,
                              blobrt_error*);

}  // namespace blobrt_cuda
