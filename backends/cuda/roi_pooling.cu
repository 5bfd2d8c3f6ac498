// The CUDA plugin's roi_max_pool and roi_max_pool_backward (plugin ABI 1.11: Fast R-CNN's
// roi_pooling_layer.cu), kernels of the plugin's own on the device's stream, computing what
// the host kernels (blobrt_kernels/roi_pooling.hpp) do: forward one thread per pooled element,
// as ROIPoolForward; backward one thread per (image, channel) plane, which finds each bin of
// the plane's regions again and adds its gradient at the bin's maximum, regions in order, then
// bins in row order (no mask kept, no two threads writing one cell, the .cu's sums in its
// order; a batch of few planes runs on few threads). The core has checked the geometry and
// the operands and sends no call without output.
#include <cfloat>
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

// A region's corner cells (x1, y1, x2, y2) and bin sizes, as ROIPoolForward derives them in
// T; false for a region naming no image of the batch or whose scaled corners are not finite
// within 2^24 cells.
template <typename T>
struct Region {
  int64_t image;
  int corner[4];
  T bin_h, bin_w;

  __device__ bool of(const T* box, T scale, int64_t batch, int64_t pooled_h, int64_t pooled_w) {
    const T index = trunc(box[0]);  // Caffe's int conversion, toward zero
    if (!(index >= T(0) && index < static_cast<T>(batch))) return false;
    for (int i = 0; i < 4; ++i) {
      const T scaled = box[1 + i] * scale;
      if (!(fabs(scaled) <= T(16777216))) return false;
      corner[i] = static_cast<int>(round(scaled));
    }
    image = static_cast<int64_t>(index);
    const int roi_w = max(corner[2] - corner[0] + 1, 1), roi_h = max(corner[3] - corner[1] + 1, 1);
    bin_h = static_cast<T>(roi_h) / static_cast<T>(pooled_h);
    bin_w = static_cast<T>(roi_w) / static_cast<T>(pooled_w);
    return true;
  }

  // Bin (ph, pw)'s first maximum in `plane` (-1: none), its value in *best (0 when empty).
  __device__ int64_t argmax(const T* plane, int height, int width, int64_t ph, int64_t pw, T* best) const {
    const int h0 = min(max(static_cast<int>(floor(static_cast<T>(ph) * bin_h)) + corner[1], 0), height);
    const int h1 = min(max(static_cast<int>(ceil(static_cast<T>(ph + 1) * bin_h)) + corner[1], 0), height);
    const int w0 = min(max(static_cast<int>(floor(static_cast<T>(pw) * bin_w)) + corner[0], 0), width);
    const int w1 = min(max(static_cast<int>(ceil(static_cast<T>(pw + 1) * bin_w)) + corner[0], 0), width);
    T m = h1 <= h0 || w1 <= w0 ? T(0) : T(-FLT_MAX);
    int64_t at = -1;
    for (int h = h0; h < h1; ++h) {
      for (int w = w0; w < w1; ++w) {
        const int64_t i = static_cast<int64_t>(h) * width + w;
        if (plane[i] > m) {
          m = plane[i];
          at = i;
        }
      }
    }
    *best = m;
    return at;
  }

  // Whether ROIPoolBackward's loop for cell (h, w) visits bin (ph, pw).
  __device__ bool visits(int64_t pooled_h, int64_t pooled_w, int h, int w, int64_t ph, int64_t pw) const {
    if (w < corner[0] || w > corner[2] || h < corner[1] || h > corner[3]) return false;
    const int ph_max = static_cast<int>(pooled_h), pw_max = static_cast<int>(pooled_w);
    const int ph0 = min(max(static_cast<int>(floor(static_cast<T>(h - corner[1]) / bin_h)), 0), ph_max);
    const int ph1 = min(max(static_cast<int>(ceil(static_cast<T>(h - corner[1] + 1) / bin_h)), 0), ph_max);
    const int pw0 = min(max(static_cast<int>(floor(static_cast<T>(w - corner[0]) / bin_w)), 0), pw_max);
    const int pw1 = min(max(static_cast<int>(ceil(static_cast<T>(w - corner[0] + 1) / bin_w)), 0), pw_max);
    return ph >= ph0 && ph < ph1 && pw >= pw0 && pw < pw1;
  }
};

struct Geometry {
  int64_t batch, channels, height, width, rois, pooled_h, pooled_w;
};

template <typename T>
__global__ void roi_max_pool_kernel(Geometry g, T scale, const T* bottom, const T* boxes, T* top) {
  const int64_t bins = g.pooled_h * g.pooled_w, count = g.rois * g.channels * bins;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t pw = i % g.pooled_w, ph = i / g.pooled_w % g.pooled_h;
    const int64_t c = i / bins % g.channels, r = i / bins / g.channels;
    Region<T> region;
    if (!region.of(boxes + r * 5, scale, g.batch, g.pooled_h, g.pooled_w)) {
      top[i] = T(NAN);
      continue;
    }
    T best;
    region.argmax(bottom + (region.image * g.channels + c) * g.height * g.width, static_cast<int>(g.height),
                  static_cast<int>(g.width), ph, pw, &best);
    top[i] = best;
  }
}

template <typename T>
__global__ void roi_max_pool_backward_kernel(Geometry g, T scale, const T* bottom, const T* boxes, const T* top_diff,
                                             T* bottom_diff) {
  const int64_t planes = g.batch * g.channels, plane_size = g.height * g.width, bins = g.pooled_h * g.pooled_w;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < planes; p += step) {
    const int64_t n = p / g.channels, c = p % g.channels;
    const T* plane = bottom + p * plane_size;
    T* out = bottom_diff + p * plane_size;
    for (int64_t i = 0; i < plane_size; ++i) out[i] = T(0);
    for (int64_t r = 0; r < g.rois; ++r) {
      Region<T> region;
      if (!region.of(boxes + r * 5, scale, g.batch, g.pooled_h, g.pooled_w) || region.image != n) continue;
      const T* diff = top_diff + (r * g.channels + c) * bins;
      for (int64_t ph = 0; ph < g.pooled_h; ++ph) {
        for (int64_t pw = 0; pw < g.pooled_w; ++pw) {
          T best;
          const int64_t at =
              region.argmax(plane, static_cast<int>(g.height), static_cast<int>(g.width), ph, pw, &best);
          if (at >= 0 && region.visits(g.pooled_h, g.pooled_w, static_cast<int>(at / g.width),
                                       static_cast<int>(at % g.width), ph, pw)) {
            out[at] += diff[ph * g.pooled_w + pw];
          }
        }
      }
    }
  }
}

}  // namespace

int roi_max_pool(void* context, int32_t precision, int64_t batch, int64_t channels, int64_t height, int64_t width,
                 int64_t rois, int64_t pooled_h, int64_t pooled_w, double spatial_scale, const void* bottom,
                 int64_t bottom_offset, const void* boxes, int64_t boxes_offset, void* top, int64_t top_offset,
                 blobrt_error* err) {
  Context* c = as_context(context);
  const Geometry g{batch, channels, height, width, rois, pooled_h, pooled_w};
  const int64_t count = rois * channels * pooled_h * pooled_w;
  if (count == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  if (precision == BLOBRT_FLOAT64) {
    roi_max_pool_kernel<double><<<grid_blocks(c, count, kThreads), kThreads, 0, c->stream>>>(
        g, spatial_scale, at<double>(bottom, bottom_offset), at<double>(boxes, boxes_offset), at<double>(top, top_offset));
  } else {
    roi_max_pool_kernel<float><<<grid_blocks(c, count, kThreads), kThreads, 0, c->stream>>>(
        g, static_cast<float>(spatial_scale), at<float>(bottom, bottom_offset), at<float>(boxes, boxes_offset),
        at<float>(top, top_offset));
  }
  CUDA_CHECK(cudaGetLastError(), "roi_max_pool_kernel launch");
  return BLOBRT_OK;
}

int roi_max_pool_backward(void* context, int32_t precision, int64_t batch, int64_t channels, int64_t height,
                          int64_t width, int64_t rois, int64_t pooled_h, int64_t pooled_w, double spatial_scale,
                          const void* bottom, int64_t bottom_offset, const void* boxes, int64_t boxes_offset,
                          const void* top_diff, int64_t top_diff_offset, void* bottom_diff,
                          int64_t bottom_diff_offset, blobrt_error* err) {
  Context* c = as_context(context);
  const Geometry g{batch, channels, height, width, rois, pooled_h, pooled_w};
  const int64_t planes = batch * channels;
  if (planes * height * width == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  if (precision == BLOBRT_FLOAT64) {
    roi_max_pool_backward_kernel<double><<<grid_blocks(c, planes, kThreads), kThreads, 0, c->stream>>>(
        g, spatial_scale, at<double>(bottom, bottom_offset), at<double>(boxes, boxes_offset),
        at<double>(top_diff, top_diff_offset), at<double>(bottom_diff, bottom_diff_offset));
  } else {
    roi_max_pool_backward_kernel<float><<<grid_blocks(c, planes, kThreads), kThreads, 0, c->stream>>>(
        g, static_cast<float>(spatial_scale), at<float>(bottom, bottom_offset), at<float>(boxes, boxes_offset),
        at<float>(top_diff, top_diff_offset), at<float>(bottom_diff, bottom_diff_offset));
  }
  CUDA_CHECK(cudaGetLastError(), "roi_max_pool_backward_kernel launch");
  return BLOBRT_OK;
}

}  // namespace blobrt_cuda
