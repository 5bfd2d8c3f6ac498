// roi_max_pool and roi_max_pool_backward (blobrt/math_operations.h): Fast R-CNN's region of
// interest max pooling (py-faster-rcnn's roi_pooling_layer.cu, ROIPoolForward and
// ROIPoolBackward), the host kernels and their MathSemantics (blobrt_kernels/math_operation.hpp).
//
// A region is five numbers: its image's index in the batch, then x1, y1, x2, y2 in the input
// image's coordinates. Scaled by spatial_scale and rounded (half away from zero, CUDA's
// round), they are the corner cells on the feature map; the region, at least 1 x 1, is cut
// into pooled_h x pooled_w bins of T-valued size, bin (ph, pw) covering rows
// [floor(ph bin_h), ceil((ph + 1) bin_h)) from the region's top, clipped to the map (so bins
// may overlap or be empty). Every step is computed as the .cu computes it, in T, so a bin's
// cells are the kernel's cells on every device.
//
// Like max_pool, no argmax is kept: the backward finds each bin's maximum again in the bottom
// data (the first value above the running maximum in row order, from -FLT_MAX), and adds the
// bin's gradient there, regions in order, then bins in row order: the order in which the
// .cu's per-element loop adds them, so the sums are its bits. A bin's gradient is added only
// where the .cu's loop would find it: the cell inside the region's rounded corners, and the
// bin among those the kernel derives for the cell (a malformed region, forced to 1 x 1, passes
// none of its gradient back, as in the .cu).
//
// Where the .cu reads outside its buffers (a region whose image index, converted toward zero,
// is not an image of the batch) or converts what int cannot hold (NaN or infinite corners),
// the result is defined here instead: NaN bins and no gradient. So are corners beyond +-2^24
// cells (a box millions of pixels off the map), where the .cu would clip its bins to the
// map's edges: the cells are computed in int here, and 2^24 keeps every sum of them exact.
// Like max_pool's, the backward's gradient is the .cu's only while the bottom data is what
// the forward pooled (a later layer rewriting it in place would move the maxima found).
#ifndef BLOBRT_KERNELS_ROI_POOLING_HPP
#define BLOBRT_KERNELS_ROI_POOLING_HPP

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

// The geometry every call shares; sizes are never negative (the core checked).
struct RoiPoolGeometry {
  std::int64_t batch, channels, height, width, rois, pooled_h, pooled_w;
  double spatial_scale;

  template <class Args>
  static RoiPoolGeometry of(const Args& a) {
    return {a.batch, a.channels, a.height, a.width, a.rois, a.pooled_h, a.pooled_w, a.spatial_scale};
  }
  std::int64_t plane() const { return height * width; }
  std::int64_t bottom_count() const { return batch * channels * height * width; }
  std::int64_t top_count() const { return rois * channels * pooled_h * pooled_w; }
  std::int64_t boxes_count() const { return rois * 5; }

  const char* invalid() const {
    if (pooled_h < 1 || pooled_w < 1) return "the pooled size must be at least 1 x 1";
    if (height > kMaxCells || width > kMaxCells) return "the feature map must be at most 2^24 cells each way";
    if (pooled_h > kMaxCells || pooled_w > kMaxCells) return "the pooled size must be at most 2^24 each way";
    std::int64_t bottom = 0, top = 0;
    if (__builtin_mul_overflow(batch, channels, &bottom) || __builtin_mul_overflow(bottom, height * width, &bottom) ||
        __builtin_mul_overflow(rois, channels, &top) || __builtin_mul_overflow(top, pooled_h * pooled_w, &top) ||
        rois > std::numeric_limits<std::int64_t>::max() / 5) {
      return "the geometry's sizes overflow 64 bits";
    }
    return nullptr;
  }
  static constexpr std::int64_t kMaxCells = std::int64_t{1} << 24;
};

// One region's place on the feature map, as the .cu derives it (in T, ints for the cells).
template <typename T>
struct RoiRegion {
  bool valid = false;
  std::int64_t image = 0;
  int start_w = 0, start_h = 0, end_w = 0, end_h = 0;
  T bin_h = T(0), bin_w = T(0);

  static RoiRegion of(const RoiPoolGeometry& g, const T* box) {
    RoiRegion r;
    const T index = std::trunc(box[0]);  // Caffe's int conversion, toward zero
    if (!(index >= T(0) && index < static_cast<T>(g.batch))) return r;
    const T scale = static_cast<T>(g.spatial_scale);
    int corner[4];
    for (int i = 0; i < 4; ++i) {
      const T scaled = box[1 + i] * scale;
      if (!(std::fabs(scaled) <= static_cast<T>(RoiPoolGeometry::kMaxCells))) return r;
      corner[i] = static_cast<int>(std::round(scaled));
    }
    r.valid = true;
    r.image = static_cast<std::int64_t>(index);
    r.start_w = corner[0];
    r.start_h = corner[1];
    r.end_w = corner[2];
    r.end_h = corner[3];
    const int roi_w = std::max(r.end_w - r.start_w + 1, 1), roi_h = std::max(r.end_h - r.start_h + 1, 1);
    r.bin_h = static_cast<T>(roi_h) / static_cast<T>(g.pooled_h);
    r.bin_w = static_cast<T>(roi_w) / static_cast<T>(g.pooled_w);
    return r;
  }

  // Bin (ph, pw)'s cells [h0, h1) x [w0, w1), clipped to the map.
  struct Bin {
    int h0, h1, w0, w1;
  };
  Bin bin(const RoiPoolGeometry& g, std::int64_t ph, std::int64_t pw) const {
    const int height = static_cast<int>(g.height), width = static_cast<int>(g.width);
    auto clip = [](int v, int hi) { return std::min(std::max(v, 0), hi); };
    return {clip(static_cast<int>(std::floor(static_cast<T>(ph) * bin_h)) + start_h, height),
            clip(static_cast<int>(std::ceil(static_cast<T>(ph + 1) * bin_h)) + start_h, height),
            clip(static_cast<int>(std::floor(static_cast<T>(pw) * bin_w)) + start_w, width),
            clip(static_cast<int>(std::ceil(static_cast<T>(pw + 1) * bin_w)) + start_w, width)};
  }

  // Whether ROIPoolBackward's loop for cell (h, w) visits bin (ph, pw): the cell inside the
  // region's corners, and the bin among those it derives from the cell.
  bool backward_visits(const RoiPoolGeometry& g, int h, int w, std::int64_t ph, std::int64_t pw) const {
    if (w < start_w || w > end_w || h < start_h || h > end_h) return false;
    auto range = [](T from, T to, std::int64_t p, std::int64_t pooled) {
      const auto n = static_cast<int>(pooled);
      const int first = std::min(std::max(static_cast<int>(std::floor(from)), 0), n);
      const int last = std::min(std::max(static_cast<int>(std::ceil(to)), 0), n);
      return p >= first && p < last;
    };
    return range(static_cast<T>(h - start_h) / bin_h, static_cast<T>(h - start_h + 1) / bin_h, ph, g.pooled_h) &&
           range(static_cast<T>(w - start_w) / bin_w, static_cast<T>(w - start_w + 1) / bin_w, pw, g.pooled_w);
  }
};

// Bin b's maximum in `plane` and the index of the first cell holding it: 0 and -1 for an
// empty bin, -FLT_MAX and -1 where no cell exceeds -FLT_MAX (NaN never does).
template <typename T, class Bin>
std::int64_t roi_bin_argmax(const T* plane, std::int64_t width, const Bin& b, T* max) {
  T best = b.h1 <= b.h0 || b.w1 <= b.w0 ? T(0) : T(-FLT_MAX);
  std::int64_t at = -1;
  for (int h = b.h0; h < b.h1; ++h) {
    for (int w = b.w0; w < b.w1; ++w) {
      const std::int64_t i = h * width + w;
      if (plane[i] > best) {
        best = plane[i];
        at = i;
      }
    }
  }
  *max = best;
  return at;
}

// Forward: region by region, the regions' planes split across blobrt's team.
template <typename T>
void roi_max_pool(const RoiPoolGeometry& g, const T* bottom, const T* boxes, T* top) {
  const std::int64_t bins = g.pooled_h * g.pooled_w, planes = g.rois * g.channels;
  parallel_for(
      planes,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t p = begin; p < end; ++p) {
          const std::int64_t r = p / g.channels, c = p % g.channels;
          const RoiRegion<T> region = RoiRegion<T>::of(g, boxes + r * 5);
          T* out = top + p * bins;
          if (!region.valid) {
            std::fill(out, out + bins, std::numeric_limits<T>::quiet_NaN());
            continue;
          }
          const T* plane = bottom + (region.image * g.channels + c) * g.plane();
          for (std::int64_t ph = 0; ph < g.pooled_h; ++ph) {
            for (std::int64_t pw = 0; pw < g.pooled_w; ++pw) {
              roi_bin_argmax(plane, g.width, region.bin(g, ph, pw), &out[ph * g.pooled_w + pw]);
            }
          }
        }
      },
      std::max<std::int64_t>(1, kParallelThreshold / std::max<std::int64_t>(1, bins * 16)));
}

// Backward: bottom_diff written over; each (image, channel) plane on its own (no two threads
// add into one cell), its regions in order.
template <typename T>
void roi_max_pool_backward(const RoiPoolGeometry& g, const T* bottom, const T* boxes, const T* top_diff,
                           T* bottom_diff) {
  const std::int64_t bins = g.pooled_h * g.pooled_w;
  parallel_for(
      g.batch * g.channels,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t p = begin; p < end; ++p) {
          const std::int64_t n = p / g.channels, c = p % g.channels;
          const T* plane = bottom + p * g.plane();
          T* out = bottom_diff + p * g.plane();
          std::fill(out, out + g.plane(), T(0));
          for (std::int64_t r = 0; r < g.rois; ++r) {
            const RoiRegion<T> region = RoiRegion<T>::of(g, boxes + r * 5);
            if (!region.valid || region.image != n) continue;
            const T* diff = top_diff + (r * g.channels + c) * bins;
            for (std::int64_t ph = 0; ph < g.pooled_h; ++ph) {
              for (std::int64_t pw = 0; pw < g.pooled_w; ++pw) {
                T max;
                const std::int64_t at = roi_bin_argmax(plane, g.width, region.bin(g, ph, pw), &max);
                if (at < 0) continue;
                const int h = static_cast<int>(at / g.width), w = static_cast<int>(at % g.width);
                if (region.backward_visits(g, h, w, ph, pw)) out[at] += diff[ph * g.pooled_w + pw];
              }
            }
          }
        }
      },
      std::max<std::int64_t>(1, kParallelThreshold / std::max<std::int64_t>(1, g.rois * bins * 16)));
}

namespace roi_detail {
inline std::int64_t counted(const RoiPoolGeometry& g, std::int64_t count) { return g.invalid() ? 0 : count; }
inline void routine(std::ostream& s, std::int32_t precision, const char* name) {
  s << (precision == BLOBRT_FLOAT64 ? "d" : "s") << name;
}
}  // namespace roi_detail

template <>
struct MathSemantics<MathOp::roi_max_pool> {
  using Args = MathArgs<MathOp::roi_max_pool>;
  static std::array<Operand, 3> operands(const Args& a) {
    const RoiPoolGeometry g = RoiPoolGeometry::of(a);
    const std::int64_t top = roi_detail::counted(g, g.top_count());
    return {{{"bottom", a.bottom, a.bottom_offset, top ? g.bottom_count() : 0, true, false},
             {"boxes", a.boxes, a.boxes_offset, top ? g.boxes_count() : 0, true, false},
             {"top", a.top, a.top_offset, top, false, true}}};
  }
  static const char* invalid(const Args& a) { return RoiPoolGeometry::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    roi_max_pool(RoiPoolGeometry::of(a), p[0], p[1], p[2]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) { roi_detail::routine(s, a.precision, "roi_max_pool"); }
};

template <>
struct MathSemantics<MathOp::roi_max_pool_backward> {
  using Args = MathArgs<MathOp::roi_max_pool_backward>;
  static std::array<Operand, 4> operands(const Args& a) {
    const RoiPoolGeometry g = RoiPoolGeometry::of(a);
    const std::int64_t bottom = roi_detail::counted(g, g.bottom_count());
    const bool any = bottom > 0;
    return {{{"bottom", a.bottom, a.bottom_offset, bottom, true, false},
             {"boxes", a.boxes, a.boxes_offset, any ? g.boxes_count() : 0, true, false},
             {"top_diff", a.top_diff, a.top_diff_offset, any ? g.top_count() : 0, true, false},
             {"bottom_diff", a.bottom_diff, a.bottom_diff_offset, bottom, false, true}}};
  }
  static const char* invalid(const Args& a) { return RoiPoolGeometry::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    roi_max_pool_backward(RoiPoolGeometry::of(a), p[0], p[1], p[2], p[3]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    roi_detail::routine(s, a.precision, "roi_max_pool_backward");
  }
};

}  // namespace blobrt_kernels

#endif
