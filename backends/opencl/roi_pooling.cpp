// The OpenCL plugin's region of interest max pooling (plugin ABI 1.11: Fast R-CNN's
// roi_pooling_layer.cu), kernels of the plugin's own, blobrt_roi_max_pool[_backward]_<f|d>,
// built once per context at the first call. Forward: one work-item per pooled element, as
// ROIPoolForward. Backward: one work-item per (image, channel) plane, which finds each bin of
// the plane's regions again and adds its gradient at the bin's maximum, regions in order,
// then bins in row order (blobrt_kernels/roi_pooling.hpp): no two work-items write one cell,
// no mask is kept, and each cell's sum is the .cu's, in its order. Each step of the bins'
// arithmetic is the .cu's in the element type; a float division is made correctly rounded
// (as CUDA's, where OpenCL allows 2.5 ulp) through double where the device has fp64, since a
// bin's edge is the floor or ceiling of a quotient. The core has checked the geometry and
// the operands, and sends no call without output.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/roi_pooling.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* roi_pool_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define BLOBRT_DIV_f(a, b) ((float)((double)(a) / (double)(b)))
#else
#define BLOBRT_DIV_f(a, b) ((a) / (b))
#endif
#define BLOBRT_DIV_d(a, b) ((a) / (b))

#define BLOBRT_ROI_GEOMETRY                                                                       \
  long batch, long channels, long height, long width, long rois, long pooled_h, long pooled_w
#define BLOBRT_ROI_PASS batch, channels, height, width, rois, pooled_h, pooled_w

/* A region's corner cells and bin sizes; false for one that names no image of the batch or
 * whose scaled corners are not finite within 2^24 cells. */
#define BLOBRT_ROI_KERNELS(T, S)                                                                   \
bool blobrt_roi_region_##S(__global const T* box, T scale, long batch, long pooled_h,            \
                           long pooled_w, long* image, int* corner, T* bin_h, T* bin_w) {        \
  const T index = trunc(box[0]); /* Caffe's int conversion, toward zero */                      \
  if (!(index >= (T)0 && index < (T)batch)) return false;                                         \
  for (int i = 0; i < 4; ++i) {                                                                   \
    const T scaled = box[1 + i] * scale;                                                          \
    if (!(fabs(scaled) <= (T)16777216)) return false;                                             \
    corner[i] = (int)round(scaled);                                                               \
  }                                                                                               \
  *image = (long)index;                                                                           \
  const int roi_w = max(corner[2] - corner[0] + 1, 1), roi_h = max(corner[3] - corner[1] + 1, 1); \
  *bin_h = BLOBRT_DIV_##S((T)roi_h, (T)pooled_h);                                                 \
  *bin_w = BLOBRT_DIV_##S((T)roi_w, (T)pooled_w);                                                 \
  return true;                                                                                    \
}                                                                                                 \
/* Bin (ph, pw)'s first maximum in `plane` (-1: none), its value in *best (0 when empty). */    \
long blobrt_roi_bin_argmax_##S(__global const T* plane, long height, long width,                \
                               const int* corner, T bin_h, T bin_w, long ph, long pw, T* best) { \
  const int h0 = min(max((int)floor((T)ph * bin_h) + corner[1], 0), (int)height);                \
  const int h1 = min(max((int)ceil((T)(ph + 1) * bin_h) + corner[1], 0), (int)height);           \
  const int w0 = min(max((int)floor((T)pw * bin_w) + corner[0], 0), (int)width);                 \
  const int w1 = min(max((int)ceil((T)(pw + 1) * bin_w) + corner[0], 0), (int)width);            \
  T m = (h1 <= h0 || w1 <= w0) ? (T)0 : (T)(-FLT_MAX);                                           \
  long at = -1;                                                                                   \
  for (int h = h0; h < h1; ++h) {                                                                 \
    for (int w = w0; w < w1; ++w) {                                                               \
      const T v = plane[h * width + w];                                                           \
      if (v > m) {                                                                                \
        m = v;                                                                                    \
        at = h * width + w;                                                                       \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  *best = m;                                                                                      \
  return at;                                                                                      \
}                                                                                                 \
/* Whether ROIPoolBackward's loop for cell (h, w) visits bin (ph, pw). */                        \
bool blobrt_roi_visits_##S(const int* corner, T bin_h, T bin_w, long pooled_h, long pooled_w,    \
                           int h, int w, long ph, long pw) {                                     \
  if (w < corner[0] || w > corner[2] || h < corner[1] || h > corner[3]) return false;            \
  const int ph0 = min(max((int)floor(BLOBRT_DIV_##S((T)(h - corner[1]), bin_h)), 0), (int)pooled_h); \
  const int ph1 = min(max((int)ceil(BLOBRT_DIV_##S((T)(h - corner[1] + 1), bin_h)), 0), (int)pooled_h); \
  const int pw0 = min(max((int)floor(BLOBRT_DIV_##S((T)(w - corner[0]), bin_w)), 0), (int)pooled_w); \
  const int pw1 = min(max((int)ceil(BLOBRT_DIV_##S((T)(w - corner[0] + 1), bin_w)), 0), (int)pooled_w); \
  return ph >= ph0 && ph < ph1 && pw >= pw0 && pw < pw1;                                          \
}                                                                                                 \
__kernel void blobrt_roi_max_pool_##S(BLOBRT_ROI_GEOMETRY, T scale, __global const T* bottom,    \
                                      long bottom_offset, __global const T* boxes,               \
                                      long boxes_offset, __global T* top, long top_offset) {     \
  const long index = get_global_id(0);                                                            \
  const long bins = pooled_h * pooled_w;                                                          \
  if (index >= rois * channels * bins) return;                                                    \
  const long pw = index % pooled_w, ph = index / pooled_w % pooled_h;                             \
  const long c = index / bins % channels, r = index / bins / channels;                            \
  long image;                                                                                     \
  int corner[4];                                                                                  \
  T bin_h, bin_w, best;                                                                           \
  if (!blobrt_roi_region_##S(boxes + boxes_offset + r * 5, scale, batch, pooled_h, pooled_w,     \
                             &image, corner, &bin_h, &bin_w)) {                                  \
    top[top_offset + index] = (T)NAN;                                                             \
    return;                                                                                       \
  }                                                                                               \
  blobrt_roi_bin_argmax_##S(bottom + bottom_offset + (image * channels + c) * height * width,     \
                            height, width, corner, bin_h, bin_w, ph, pw, &best);                 \
  top[top_offset + index] = best;                                                                 \
}                                                                                                 \
__kernel void blobrt_roi_max_pool_backward_##S(BLOBRT_ROI_GEOMETRY, T scale,                     \
                                               __global const T* bottom, long bottom_offset,     \
                                               __global const T* boxes, long boxes_offset,       \
                                               __global const T* top_diff, long top_diff_offset, \
                                               __global T* bottom_diff, long bottom_diff_offset) { \
  const long p = get_global_id(0);                                                                \
  if (p >= batch * channels) return;                                                              \
  const long n = p / channels, c = p % channels, plane_size = height * width;                     \
  __global const T* plane = bottom + bottom_offset + p * plane_size;                              \
  __global T* out = bottom_diff + bottom_diff_offset + p * plane_size;                            \
  for (long i = 0; i < plane_size; ++i) out[i] = (T)0;                                            \
  const long bins = pooled_h * pooled_w;                                                          \
  for (long r = 0; r < rois; ++r) {                                                               \
    long image;                                                                                   \
    int corner[4];                                                                                \
    T bin_h, bin_w, best;                                                                         \
    if (!blobrt_roi_region_##S(boxes + boxes_offset + r * 5, scale, batch, pooled_h, pooled_w,   \
                               &image, corner, &bin_h, &bin_w) || image != n) {                  \
      continue;                                                                                   \
    }                                                                                             \
    __global const T* diff = top_diff + top_diff_offset + (r * channels + c) * bins;              \
    for (long ph = 0; ph < pooled_h; ++ph) {                                                      \
      for (long pw = 0; pw < pooled_w; ++pw) {                                                    \
        const long at = blobrt_roi_bin_argmax_##S(plane, height, width, corner, bin_h, bin_w,     \
                                                  ph, pw, &best);                                 \
        if (at >= 0 && blobrt_roi_visits_##S(corner, bin_h, bin_w, pooled_h, pooled_w,           \
                                             (int)(at / width), (int)(at % width), ph, pw)) {     \
          out[at] += diff[ph * pooled_w + pw];                                                    \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
}

BLOBRT_ROI_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_ROI_KERNELS(double, d)
#endif
)CLC";
}

// [forward, backward][precision] in Context::roi_pool_kernels.
int roi_kernel(Context* c, int backward, int32_t precision, cl_kernel* kernel, blobrt_error* err) {
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  const std::string name = std::string(backward ? "blobrt_roi_max_pool_backward_" : "blobrt_roi_max_pool_") +
                           (p ? "d" : "f");
  return cached_kernel(c, &c->roi_pool_program, roi_pool_kernel_source(), "roi pooling kernels",
                       &c->roi_pool_kernels[backward][p], name, kernel, err);
}

// The geometry's arguments, 0 to 7 (spatial_scale in the kernel's precision).
cl_int set_geometry(cl_kernel kernel, int32_t precision, const blobrt_kernels::RoiPoolGeometry& g) {
  const cl_int status = set_kernel_args(kernel, 0, cl_long{g.batch}, cl_long{g.channels}, cl_long{g.height},
                                        cl_long{g.width}, cl_long{g.rois}, cl_long{g.pooled_h}, cl_long{g.pooled_w});
  return status == CL_SUCCESS ? set_scalar_arg(kernel, 7, precision, g.spatial_scale) : status;
}

}  // namespace

void release_roi_pool(Context* c) { release_cached_kernels(&c->roi_pool_program, c->roi_pool_kernels); }

int roi_max_pool(void* context, int32_t precision, int64_t batch, int64_t channels, int64_t height, int64_t width,
                 int64_t rois, int64_t pooled_h, int64_t pooled_w, double spatial_scale, const void* bottom,
                 int64_t bottom_offset, const void* boxes, int64_t boxes_offset, void* top, int64_t top_offset,
                 blobrt_error* err) {
  Context* c = as_context(context);
  const blobrt_kernels::MathArgs<blobrt_kernels::MathOp::roi_max_pool> args{
      precision, batch, channels, height, width, rois, pooled_h, pooled_w, spatial_scale,
      bottom, bottom_offset, boxes, boxes_offset, top, top_offset};
  if (int s = check_operands(args, err)) return s;
  const blobrt_kernels::RoiPoolGeometry g = blobrt_kernels::RoiPoolGeometry::of(args);
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  cl_kernel kernel = nullptr;
  if (int s = roi_kernel(c, 0, precision, &kernel, err)) return s;
  cl_int status = set_geometry(kernel, precision, g);
  if (status == CL_SUCCESS) {
    status = set_kernel_args(kernel, 8, as_mem(bottom), cl_long{bottom_offset}, as_mem(boxes), cl_long{boxes_offset},
                             as_mem(top), cl_long{top_offset});
  }
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(roi_max_pool)", status);
  return enqueue_1d(c, kernel, g.top_count(), "roi_max_pool", err);
}

int roi_max_pool_backward(void* context, int32_t precision, int64_t batch, int64_t channels, int64_t height,
                          int64_t width, int64_t rois, int64_t pooled_h, int64_t pooled_w, double spatial_scale,
                          const void* bottom, int64_t bottom_offset, const void* boxes, int64_t boxes_offset,
                          const void* top_diff, int64_t top_diff_offset, void* bottom_diff,
                          int64_t bottom_diff_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const blobrt_kernels::MathArgs<blobrt_kernels::MathOp::roi_max_pool_backward> args{
      precision,   batch,        channels, height,          width,       rois,
      pooled_h,    pooled_w,     spatial_scale, bottom,     bottom_offset, boxes,
      boxes_offset, top_diff,    top_diff_offset, bottom_diff, bottom_diff_offset};
  if (int s = check_operands(args, err)) return s;
  const blobrt_kernels::RoiPoolGeometry g = blobrt_kernels::RoiPoolGeometry::of(args);
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernel's arguments
  cl_kernel kernel = nullptr;
  if (int s = roi_kernel(c, 1, precision, &kernel, err)) return s;
  cl_int status = set_geometry(kernel, precision, g);
  if (status == CL_SUCCESS) {
    status = set_kernel_args(kernel, 8, as_mem(bottom), cl_long{bottom_offset}, as_mem(boxes), cl_long{boxes_offset},
                             as_mem(top_diff), cl_long{top_diff_offset}, as_mem(bottom_diff),
                             cl_long{bottom_diff_offset});
  }
  if (status != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(roi_max_pool_backward)", status);
  return enqueue_1d(c, kernel, g.batch * g.channels, "roi_max_pool_backward", err);
}

}  // namespace blobrt_opencl
