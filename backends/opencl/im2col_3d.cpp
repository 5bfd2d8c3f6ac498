// The OpenCL plugin's im2col_3d and col2im_3d (plugin ABI 1.12): Caffe's im2col_nd_gpu and
// col2im_nd_gpu over up to three spatial axes, as kernels of the plugin's own,
// blobrt_<im2col|col2im>_3d_<f|d>, built once per context at the first call. im2col_3d: one
// work-item per (channel, output position), writing its kernel_d x kernel_h x kernel_w column
// elements; col2im_3d: one work-item per image element, gathering the column elements that
// came from it in the host kernel's order (kernel offsets in row order:
// blobrt_kernels/im2col_3d.hpp), so no two work-items write one element and the sums are the
// host's. The core has checked the geometry (kernel, stride and dilation at least 1, no
// coordinate beyond 64 bits) and the operands, and sends no call without output.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/im2col_3d.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* conv_3d_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The geometry, as plugin_abi.h's im2col_3d takes it. */
#define BLOBRT_CONV_3D_GEOMETRY                                                                   \
  long channels, long id, long ih, long iw, long od, long oh, long ow, long kd, long kh, long kw, \
      long pd, long ph, long pw, long sd, long sh, long sw, long dd, long dh, long dw

#define BLOBRT_CONV_3D_KERNELS(T, S)                                                              \
__kernel void blobrt_im2col_3d_##S(BLOBRT_CONV_3D_GEOMETRY, __global const T* im, long im_offset, \
                                   __global T* col, long col_offset) {                            \
  const long index = get_global_id(0);                                                            \
  const long positions = od * oh * ow;                                                            \
  if (index >= channels * positions) return;                                                      \
  const long x = index % ow, y = index / ow % oh, z = index / (ow * oh) % od, c = index / positions; \
  __global const T* image = im + im_offset + c * id * ih * iw;                                    \
  __global T* out = col + col_offset + c * kd * kh * kw * positions + (z * oh + y) * ow + x;       \
  for (long i = 0; i < kd; ++i) {                                                                 \
    const long d = z * sd - pd + i * dd;                                                          \
    for (long j = 0; j < kh; ++j) {                                                               \
      const long h = y * sh - ph + j * dh;                                                        \
      for (long k = 0; k < kw; ++k, out += positions) {                                           \
        const long w = x * sw - pw + k * dw;                                                      \
        *out = d >= 0 && d < id && h >= 0 && h < ih && w >= 0 && w < iw                           \
                   ? image[(d * ih + h) * iw + w] : (T)0;                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
}                                                                                                 \
__kernel void blobrt_col2im_3d_##S(BLOBRT_CONV_3D_GEOMETRY, __global const T* col, long col_offset, \
                                   __global T* im, long im_offset) {                              \
  const long index = get_global_id(0);                                                            \
  if (index >= channels * id * ih * iw) return;                                                   \
  const long w = index % iw, h = index / iw % ih, d = index / (iw * ih) % id, c = index / (iw * ih * id); \
  const long positions = od * oh * ow;                                                            \
  __global const T* columns = col + col_offset + c * kd * kh * kw * positions;                    \
  T sum = (T)0;                                                                                   \
  for (long i = 0; i < kd; ++i) {                                                                 \
    const long zp = d + pd - i * dd;                                                              \
    if (zp < 0 || zp % sd != 0 || zp / sd >= od) continue;                                        \
    for (long j = 0; j < kh; ++j) {                                                               \
      const long yp = h + ph - j * dh;                                                            \
      if (yp < 0 || yp % sh != 0 || yp / sh >= oh) continue;                                      \
      for (long k = 0; k < kw; ++k) {                                                             \
        const long xp = w + pw - k * dw;                                                          \
        if (xp < 0 || xp % sw != 0 || xp / sw >= ow) continue;                                    \
        sum += columns[((i * kh + j) * kw + k) * positions + (zp / sd * oh + yp / sh) * ow + xp / sw]; \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  im[im_offset + index] = sum;                                                                    \
}

BLOBRT_CONV_3D_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_CONV_3D_KERNELS(double, d)
#endif
)CLC";
}

}  // namespace

void release_conv_3d(Context* c) { release_cached_kernels(&c->conv_3d_program, c->conv_3d_kernels); }

// im2col_3d (ToImage false: im into col) and col2im_3d (true: col into im): the two entries
// share their parameters' types, the geometry then `from` and `to` with their offsets.
template <bool ToImage>
int conv_3d_entry(void* context, int32_t precision, int64_t channels, int64_t depth, int64_t height, int64_t width,
                  int64_t out_depth, int64_t out_height, int64_t out_width, int64_t kernel_d, int64_t kernel_h,
                  int64_t kernel_w, int64_t pad_d, int64_t pad_h, int64_t pad_w, int64_t stride_d, int64_t stride_h,
                  int64_t stride_w, int64_t dilation_d, int64_t dilation_h, int64_t dilation_w, const void* from,
                  int64_t from_offset, void* to, int64_t to_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const blobrt_kernels::Conv3dGeometry g{channels,
                                         {{depth, height, width}},
                                         {{out_depth, out_height, out_width}},
                                         {{kernel_d, kernel_h, kernel_w}},
                                         {{pad_d, pad_h, pad_w}},
                                         {{stride_d, stride_h, stride_w}},
                                         {{dilation_d, dilation_h, dilation_w}}};
  const char* call = ToImage ? "col2im_3d" : "im2col_3d";
  const size_t element = element_size(precision);
  const int64_t image = g.image_count(), columns = g.column_count();
  if (int s = check_extent(from, from_offset, ToImage ? columns : image, element, ToImage ? "col" : "im", call, err)) {
    return s;
  }
  if (int s = check_extent(to, to_offset, ToImage ? image : columns, element, ToImage ? "im" : "col", call, err)) {
    return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  cl_kernel kernel = nullptr;
  if (int s = cached_kernel(c, &c->conv_3d_program, conv_3d_kernel_source(), "im2col_3d/col2im_3d kernels",
                            &c->conv_3d_kernels[ToImage ? 1 : 0][p], std::string("blobrt_") + call + (p ? "_d" : "_f"),
                            &kernel, err)) {
    return s;
  }
  cl_int status = set_kernel_args(kernel, 0, cl_long{channels}, cl_long{depth}, cl_long{height}, cl_long{width},
                                  cl_long{out_depth}, cl_long{out_height}, cl_long{out_width}, cl_long{kernel_d},
                                  cl_long{kernel_h}, cl_long{kernel_w}, cl_long{pad_d}, cl_long{pad_h}, cl_long{pad_w},
                                  cl_long{stride_d}, cl_long{stride_h}, cl_long{stride_w}, cl_long{dilation_d},
                                  cl_long{dilation_h}, cl_long{dilation_w}, as_mem(from), cl_long{from_offset},
                                  as_mem(to), cl_long{to_offset});
  if (status != CL_SUCCESS) return cl_fail(err, (std::string("clSetKernelArg(") + call + ")").c_str(), status);
  const size_t global = static_cast<size_t>(ToImage ? image : channels * g.positions());
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
           (std::string("clEnqueueNDRangeKernel(") + call + ")").c_str());
  return BLOBRT_OK;
}
template int conv_3d_entry<false>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);
template int conv_3d_entry<true>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                 int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                 int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);

}  // namespace blobrt_opencl
