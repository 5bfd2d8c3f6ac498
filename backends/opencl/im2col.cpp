// The OpenCL plugin's im2col and col2im (plugin ABI 1.4): Caffe's im2col_gpu and col2im_gpu
// as kernels of the plugin's own, blobrt_im2col_<f|d> and blobrt_col2im_<f|d>, built once per
// context at the first call. im2col: one work-item per (channel, output row, output column),
// writing its kernel_h x kernel_w column elements; col2im: one work-item per image element,
// gathering the column elements that came from it in the host kernel's order (kernel row,
// then column: blobrt_kernels/im2col.hpp), so no two work-items write the same element and
// the sum is the same on every run. The core has checked the geometry (kernel, stride and
// dilation at least 1) and the operands, and sends no call without output.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/im2col.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* conv_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The geometry, as plugin_abi.h's im2col takes it, then the output's extent. */
#define BLOBRT_CONV_GEOMETRY                                                                      \
  long channels, long height, long width, long kernel_h, long kernel_w, long pad_h, long pad_w,   \
      long stride_h, long stride_w, long dilation_h, long dilation_w, long out_h, long out_w

#define BLOBRT_CONV_KERNELS(T, S)                                                                 \
__kernel void blobrt_im2col_##S(BLOBRT_CONV_GEOMETRY, __global const T* im, long im_offset,       \
                                __global T* col, long col_offset) {                               \
  const long index = get_global_id(0);                                                            \
  const long plane = out_h * out_w;                                                               \
  if (index >= channels * plane) return;                                                          \
  const long x = index % out_w, y = index / out_w % out_h, c = index / plane;                     \
  __global const T* image = im + im_offset + c * height * width;                                  \
  __global T* out = col + col_offset + c * kernel_h * kernel_w * plane + y * out_w + x;           \
  for (long i = 0; i < kernel_h; ++i) {                                                           \
    const long r = y * stride_h - pad_h + i * dilation_h;                                         \
    for (long j = 0; j < kernel_w; ++j, out += plane) {                                           \
      const long q = x * stride_w - pad_w + j * dilation_w;                                       \
      *out = r >= 0 && r < height && q >= 0 && q < width ? image[r * width + q] : (T)0;           \
    }                                                                                             \
  }                                                                                               \
}                                                                                                 \
__kernel void blobrt_col2im_##S(BLOBRT_CONV_GEOMETRY, __global const T* col, long col_offset,     \
                                __global T* im, long im_offset) {                                 \
  const long index = get_global_id(0);                                                            \
  if (index >= channels * height * width) return;                                                 \
  const long w = index % width, h = index / width % height, c = index / (width * height);         \
  const long plane = out_h * out_w;                                                               \
  __global const T* columns = col + col_offset + c * kernel_h * kernel_w * plane;                 \
  T sum = (T)0;                                                                                   \
  for (long i = 0; i < kernel_h; ++i) {                                                           \
    const long hp = h + pad_h - i * dilation_h;                                                   \
    if (hp < 0 || hp % stride_h != 0 || hp / stride_h >= out_h) continue;                         \
    for (long j = 0; j < kernel_w; ++j) {                                                         \
      const long wp = w + pad_w - j * dilation_w;                                                 \
      if (wp < 0 || wp % stride_w != 0 || wp / stride_w >= out_w) continue;                       \
      sum += columns[(i * kernel_w + j) * plane + hp / stride_h * out_w + wp / stride_w];         \
    }                                                                                             \
  }                                                                                               \
  im[im_offset + index] = sum;                                                                    \
}

BLOBRT_CONV_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_CONV_KERNELS(double, d)
#endif
)CLC";
}

// One launch: `from` (im for im2col, col for col2im) into `to`, one work-item per element of
// the operation's unit (an output position's column, an image element).
int launch(Context* c, bool to_image, int32_t precision, const blobrt_kernels::ConvGeometry& g, const void* from,
           int64_t from_offset, void* to, int64_t to_offset, blobrt_error* err) {
  const char* call = to_image ? "col2im" : "im2col";
  const size_t element = element_size(precision);
  const int64_t image = g.image_count(), columns = g.column_count();
  if (int s = check_extent(from, from_offset, to_image ? columns : image, element, to_image ? "col" : "im", call, err)) {
    return s;
  }
  if (int s = check_extent(to, to_offset, to_image ? image : columns, element, to_image ? "im" : "col", call, err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  const std::string name = std::string("blobrt_") + call + (p ? "_d" : "_f");
  cl_kernel kernel = nullptr;
  if (int s = cached_kernel(c, &c->conv_program, conv_kernel_source(), "im2col/col2im kernels",
                            &c->conv_kernels[to_image ? 1 : 0][p], name, &kernel, err)) {
    return s;
  }
  const cl_long out_h = g.out_h(), out_w = g.out_w();
  cl_int status = set_kernel_args(kernel, 0, cl_long{g.channels}, cl_long{g.height}, cl_long{g.width},
                                  cl_long{g.kernel_h}, cl_long{g.kernel_w}, cl_long{g.pad_h}, cl_long{g.pad_w},
                                  cl_long{g.stride_h}, cl_long{g.stride_w}, cl_long{g.dilation_h},
                                  cl_long{g.dilation_w}, out_h, out_w, as_mem(from), cl_long{from_offset},
                                  as_mem(to), cl_long{to_offset});
  if (status != CL_SUCCESS) return cl_fail(err, (std::string("clSetKernelArg(") + call + ")").c_str(), status);
  const size_t global = static_cast<size_t>(to_image ? g.image_count() : g.channels * out_h * out_w);
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
           (std::string("clEnqueueNDRangeKernel(") + call + ")").c_str());
  return BLOBRT_OK;
}

}  // namespace

void release_conv(Context* c) { release_cached_kernels(&c->conv_program, c->conv_kernels); }

// im2col (ToImage false: im into col) and col2im (true: col into im): the two entries share
// their parameters' types, the geometry then `from` and `to` with their offsets.
template <bool ToImage>
int conv_entry(void* context, int32_t precision, int64_t channels, int64_t height, int64_t width, int64_t kernel_h,
               int64_t kernel_w, int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
               int64_t dilation_h, int64_t dilation_w, const void* from, int64_t from_offset, void* to,
               int64_t to_offset, blobrt_error* err) {
  const blobrt_kernels::ConvGeometry g{channels, height,   width,    kernel_h,   kernel_w,  pad_h,
                                       pad_w,    stride_h, stride_w, dilation_h, dilation_w};
  return launch(as_context(context), ToImage, precision, g, from, from_offset, to, to_offset, err);
}
template int conv_entry<false>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                               int64_t, int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t,
                               blobrt_error*);
template int conv_entry<true>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t,
                              blobrt_error*);

}  // namespace blobrt_opencl
