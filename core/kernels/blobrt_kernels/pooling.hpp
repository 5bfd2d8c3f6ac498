// Caffe's max and average pooling (src/caffe/layers/pooling_layer.cpp and .cu): the host
// kernels and their MathSemantics (blobrt_kernels/math_operation.hpp). Each of `planes`
// images (num x channels) of height x width is pooled to pooled_h x pooled_w: window
// (ph, pw) covers rows [ph stride_h - pad_h, + kernel_h) and columns likewise, clipped to the
// image; an average divides by the window's size clipped to the padded image instead
// (Caffe's pool_size), so padding counts as zeros.
//
// Max pooling keeps no mask: its backward finds each window's maximum again in the bottom
// data, as max_pool found it (the first greater value in row order), so a backend needs no
// index buffer and the results are Caffe's mask-based ones. A window whose every value is
// -FLT_MAX or below (or NaN) has no maximum: its top is -FLT_MAX, as in Caffe, and its
// gradient goes nowhere (Caffe's mask of -1 would write before the buffer).
//
// Backward adds each element's terms in window order, Caffe's scatter order: the same bits
// as Caffe's CPU code, here and on a device that gathers per element (OpenCL).
#ifndef BLOBRT_KERNELS_POOLING_HPP
#define BLOBRT_KERNELS_POOLING_HPP

#include <algorithm>
#include <array>
#include <cfloat>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

struct PoolGeometry {
  std::int64_t planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;

  template <class Args>
  static PoolGeometry of(const Args& g) {
    return {g.planes,   g.height,   g.width,    g.pooled_h, g.pooled_w, g.kernel_h,
            g.kernel_w, g.stride_h, g.stride_w, g.pad_h,    g.pad_w};
  }
  std::int64_t bottom_count() const { return planes * height * width; }
  std::int64_t top_count() const { return planes * pooled_h * pooled_w; }

  // nullptr for a geometry Caffe's PoolingLayer can have; else why not. Sizes are the
  // caller's (never negative: the core checked); every product below must fit first.
  const char* invalid() const {
    if (kernel_h < 1 || kernel_w < 1) return "the kernel must be at least 1 x 1";
    if (stride_h < 1 || stride_w < 1) return "the stride must be at least 1";
    if (pad_h >= kernel_h || pad_w >= kernel_w) return "the padding must be smaller than the kernel";
    if (!fits()) return "the geometry's sizes overflow 64 bits";
    // A window may hold no image element: without padding Caffe's rounding up keeps a last
    // window that starts past the image (kernel 1, stride 2, height 4); its maximum is
    // -FLT_MAX and its average Caffe's 0 / size, as in Caffe.
    return nullptr;
  }

  // Window (ph, pw)'s rows [h0, h1) and columns [w0, w1) inside the image (empty where it
  // starts past it), and its size clipped to the padded image (the average's divisor, as
  // Caffe computes it: (hend - hstart) (wend - wstart)).
  struct Window {
    std::int64_t h0, h1, w0, w1, padded_size;
  };
  Window window(std::int64_t ph, std::int64_t pw) const {
    std::int64_t h0 = ph * stride_h - pad_h, w0 = pw * stride_w - pad_w;
    std::int64_t h1 = std::min(h0 + kernel_h, height + pad_h), w1 = std::min(w0 + kernel_w, width + pad_w);
    const std::int64_t padded_size = (h1 - h0) * (w1 - w0);
    return {std::max<std::int64_t>(h0, 0), std::min(h1, height), std::max<std::int64_t>(w0, 0), std::min(w1, width),
            padded_size};
  }

 private:
  bool fits() const {
    std::int64_t bottom = 0, top = 0, reach = 0;
    return !__builtin_mul_overflow(planes, height, &bottom) && !__builtin_mul_overflow(bottom, width, &bottom) &&
           !__builtin_mul_overflow(planes, pooled_h, &top) && !__builtin_mul_overflow(top, pooled_w, &top) &&
           !__builtin_mul_overflow(pooled_h, stride_h, &reach) && !__builtin_add_overflow(reach, kernel_h, &reach) &&
           !__builtin_mul_overflow(pooled_w, stride_w, &reach) && !__builtin_add_overflow(reach, kernel_w, &reach) &&
           !__builtin_add_overflow(height, pad_h, &reach) && !__builtin_add_overflow(width, pad_w, &reach);
  }
};

// The index in its plane of window (ph, pw)'s maximum, and the maximum; -1 and -FLT_MAX
// where no value exceeds -FLT_MAX.
template <typename T>
std::int64_t window_argmax(const PoolGeometry& g, const T* plane, std::int64_t ph, std::int64_t pw, T* max) {
  const PoolGeometry::Window win = g.window(ph, pw);
  T best = T(-FLT_MAX);
  std::int64_t at = -1;
  for (std::int64_t h = win.h0; h < win.h1; ++h) {
    for (std::int64_t w = win.w0; w < win.w1; ++w) {
      if (plane[h * g.width + w] > best) {
        best = plane[h * g.width + w];
        at = h * g.width + w;
      }
    }
  }
  *max = best;
  return at;
}

// Each kernel works plane by plane, planes split across blobrt's team (parallel.hpp) once
// there are enough elements to share.
template <class Fn>
void for_each_plane(const PoolGeometry& g, Fn fn) {
  const std::int64_t per_plane = std::max<std::int64_t>(1, g.height * g.width);
  parallel_for(
      g.planes,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t p = begin; p < end; ++p) fn(p);
      },
      std::max<std::int64_t>(1, kParallelThreshold / per_plane));
}

template <typename T>
void max_pool(const PoolGeometry& g, const T* bottom, T* top) {
  for_each_plane(g, [&](std::int64_t p) {
    const T* plane = bottom + p * g.height * g.width;
    T* out = top + p * g.pooled_h * g.pooled_w;
    for (std::int64_t ph = 0; ph < g.pooled_h; ++ph) {
      for (std::int64_t pw = 0; pw < g.pooled_w; ++pw) window_argmax(g, plane, ph, pw, &out[ph * g.pooled_w + pw]);
    }
  });
}

// The backward kernels scatter over windows, as Caffe's CPU code does (bottom_diff zeroed,
// then each window's share added where it goes): each element's terms are added in window
// order, which is the order a device's gather over the windows holding it follows.
template <typename T>
void max_pool_backward(const PoolGeometry& g, const T* bottom, const T* top_diff, T* bottom_diff) {
  for_each_plane(g, [&](std::int64_t p) {
    const T* plane = bottom + p * g.height * g.width;
    const T* diff = top_diff + p * g.pooled_h * g.pooled_w;
    T* out = bottom_diff + p * g.height * g.width;
    std::fill(out, out + g.height * g.width, T(0));
    for (std::int64_t ph = 0; ph < g.pooled_h; ++ph) {
      for (std::int64_t pw = 0; pw < g.pooled_w; ++pw) {
        T max;
        const std::int64_t at = window_argmax(g, plane, ph, pw, &max);
        if (at >= 0) out[at] += diff[ph * g.pooled_w + pw];
      }
    }
  });
}

template <typename T>
void ave_pool(const PoolGeometry& g, const T* bottom, T* top) {
  for_each_plane(g, [&](std::int64_t p) {
    const T* plane = bottom + p * g.height * g.width;
    T* out = top + p * g.pooled_h * g.pooled_w;
    for (std::int64_t ph = 0; ph < g.pooled_h; ++ph) {
      for (std::int64_t pw = 0; pw < g.pooled_w; ++pw) {
        const PoolGeometry::Window win = g.window(ph, pw);
        T sum = T(0);
        for (std::int64_t h = win.h0; h < win.h1; ++h) {
          for (std::int64_t w = win.w0; w < win.w1; ++w) sum += plane[h * g.width + w];
        }
        out[ph * g.pooled_w + pw] = sum / T(win.padded_size);
      }
    }
  });
}

template <typename T>
void ave_pool_backward(const PoolGeometry& g, const T* top_diff, T* bottom_diff) {
  for_each_plane(g, [&](std::int64_t p) {
    const T* diff = top_diff + p * g.pooled_h * g.pooled_w;
    T* out = bottom_diff + p * g.height * g.width;
    std::fill(out, out + g.height * g.width, T(0));
    for (std::int64_t ph = 0; ph < g.pooled_h; ++ph) {
      for (std::int64_t pw = 0; pw < g.pooled_w; ++pw) {
        const PoolGeometry::Window win = g.window(ph, pw);
        const T share = diff[ph * g.pooled_w + pw] / T(win.padded_size);
        for (std::int64_t h = win.h0; h < win.h1; ++h) {
          for (std::int64_t w = win.w0; w < win.w1; ++w) out[h * g.width + w] += share;
        }
      }
    }
  });
}

namespace pool_detail {
inline void routine(std::ostream& s, std::int32_t precision, const char* name) {
  s << (precision == BLOBRT_FLOAT64 ? "d" : "s") << name;
}
// The counts of a geometry the core accepts; 0 for one it refuses (the checks then name it).
inline std::int64_t counted(const PoolGeometry& g, std::int64_t count) { return g.invalid() ? 0 : count; }
}  // namespace pool_detail

// max_pool and ave_pool: the same operands, each its own kernel.
template <MathOp Op, void (*Kernel32)(const PoolGeometry&, const float*, float*),
          void (*Kernel64)(const PoolGeometry&, const double*, double*)>
struct PoolForwardSemantics {
  using Args = MathArgs<Op>;
  static std::array<Operand, 2> operands(const Args& a) {
    const PoolGeometry g = PoolGeometry::of(a);
    const std::int64_t top = pool_detail::counted(g, g.top_count());
    return {{{"bottom", a.bottom, a.bottom_offset, top ? g.bottom_count() : 0, true, false},
             {"top", a.top, a.top_offset, top, false, true}}};
  }
  static const char* invalid(const Args& a) { return PoolGeometry::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    if constexpr (sizeof(T) == sizeof(double)) {
      Kernel64(PoolGeometry::of(a), p[0], p[1]);
    } else {
      Kernel32(PoolGeometry::of(a), p[0], p[1]);
    }
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    pool_detail::routine(s, a.precision, Op == MathOp::max_pool ? "max_pool" : "ave_pool");
  }
};
template <>
struct MathSemantics<MathOp::max_pool>
    : PoolForwardSemantics<MathOp::max_pool, &max_pool<float>, &max_pool<double>> {};
template <>
struct MathSemantics<MathOp::ave_pool>
    : PoolForwardSemantics<MathOp::ave_pool, &ave_pool<float>, &ave_pool<double>> {};

// The backward operations write all of bottom_diff; with no window (a pooled extent of 0)
// that is zeros, which only_scales says (beta 0) so that no plugin is called. What both
// share: the geometry's checks, and their operands' extents (top_diff, bottom_diff).
template <MathOp Op>
struct PoolBackwardSemantics {
  using Args = MathArgs<Op>;
  static const char* invalid(const Args& a) { return PoolGeometry::of(a).invalid(); }
  static bool only_scales(const Args& a, double* beta) {
    *beta = 0;
    return PoolGeometry::of(a).top_count() == 0;
  }
  // bottom_diff's element count (0 for a refused geometry), and top_diff's (0 without it).
  static std::int64_t bottom_count(const Args& a) {
    const PoolGeometry g = PoolGeometry::of(a);
    return pool_detail::counted(g, g.bottom_count());
  }
  static std::int64_t top_count(const Args& a) { return bottom_count(a) ? PoolGeometry::of(a).top_count() : 0; }
  static void routine(std::ostream& s, const Args& a) {
    pool_detail::routine(s, a.precision, Op == MathOp::max_pool_backward ? "max_pool_backward" : "ave_pool_backward");
  }
};

template <>
struct MathSemantics<MathOp::max_pool_backward> : PoolBackwardSemantics<MathOp::max_pool_backward> {
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t bottom = bottom_count(a), top = top_count(a);
    return {{{"bottom", a.bottom, a.bottom_offset, top ? bottom : 0, true, false},
             {"top_diff", a.top_diff, a.top_diff_offset, top, true, false},
             {"bottom_diff", a.bottom_diff, a.bottom_diff_offset, bottom, false, true}}};
  }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    max_pool_backward<T>(PoolGeometry::of(a), p[0], p[1], p[2]);
    return true;
  }
};

template <>
struct MathSemantics<MathOp::ave_pool_backward> : PoolBackwardSemantics<MathOp::ave_pool_backward> {
  static std::array<Operand, 2> operands(const Args& a) {
    return {{{"top_diff", a.top_diff, a.top_diff_offset, top_count(a), true, false},
             {"bottom_diff", a.bottom_diff, a.bottom_diff_offset, bottom_count(a), false, true}}};
  }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    ave_pool_backward<T>(PoolGeometry::of(a), p[0], p[1]);
    return true;
  }
};

}  // namespace blobrt_kernels

#endif
