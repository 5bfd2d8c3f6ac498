// Caffe's local response normalization across channels (src/caffe/layers/lrn_layer.cu): the
// host kernels and their MathSemantics (blobrt_kernels/math_operation.hpp). The array is
// outer x channels x inner (num x channels x height*width); each (outer, inner) position is
// one pass over its channels with a window of `size` channels centred on each, in Caffe's
// GPU kernels' order: a running sum that adds the channel entering the window and
// subtracts the one leaving it: every device adds in Caffe's kernels' order (a device that
// fuses multiply-adds may round differently).
#ifndef BLOBRT_KERNELS_LRN_HPP
#define BLOBRT_KERNELS_LRN_HPP

#include <array>
#include <cmath>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/softmax.hpp"

namespace blobrt_kernels {

// What both operations check: the shape (softmax's) and the window, which Caffe requires odd.
struct LrnSemantics {
  template <class Args>
  static const char* invalid(const Args& a) {
    if (const char* why = SoftmaxShape::of(a).invalid()) return why;
    if (a.size < 1 || a.size % 2 == 0) return "the window size must be odd (Caffe's local_size)";
    return nullptr;
  }
  // fn(channel entering, channel written (-1: none yet)) over one position's pass: the
  // channel entering the window at each step and the channel whose window is then complete.
  template <class Fn>
  static void window_pass(std::int64_t channels, std::int64_t size, Fn fn) {
    const std::int64_t post_pad = size - (size - 1) / 2 - 1;
    for (std::int64_t head = 0; head < channels + post_pad; ++head) fn(head, head - post_pad);
  }
};

// scale = k + alpha_over_size * the sum of bottom² over each channel's window.
template <typename T>
void lrn_scale(const SoftmaxShape& s, std::int64_t size, T alpha_over_size, T k, const T* bottom, T* scale) {
  s.for_each_position([&](std::int64_t, std::int64_t first, std::int64_t stride) {
    const T* x = bottom + first;
    T* y = scale + first;
    T accum = T(0);
    LrnSemantics::window_pass(s.channels, size, [&](std::int64_t head, std::int64_t out) {
      if (head < s.channels) accum += x[head * stride] * x[head * stride];
      if (head - size >= 0) accum -= x[(head - size) * stride] * x[(head - size) * stride];
      if (out >= 0) y[out * stride] = k + accum * alpha_over_size;
    });
  });
}

// bottom_diff = top_diff * scale^negative_beta - cache_ratio * bottom * the sum of
// top_diff * top / scale over each channel's window.
template <typename T>
void lrn_backward(const SoftmaxShape& s, std::int64_t size, T negative_beta, T cache_ratio, const T* bottom,
                  const T* top, const T* scale, const T* top_diff, T* bottom_diff) {
  s.for_each_position([&](std::int64_t, std::int64_t first, std::int64_t stride) {
    const auto ratio = [&](std::int64_t c) {
      const std::int64_t e = first + c * stride;
      return top_diff[e] * top[e] / scale[e];
    };
    T accum = T(0);
    LrnSemantics::window_pass(s.channels, size, [&](std::int64_t head, std::int64_t out) {
      if (head < s.channels) accum += ratio(head);
      if (head - size >= 0) accum -= ratio(head - size);
      if (out < 0) return;
      const std::int64_t e = first + out * stride;
      bottom_diff[e] = top_diff[e] * std::pow(scale[e], negative_beta) - cache_ratio * bottom[e] * accum;
    });
  });
}

template <>
struct MathSemantics<MathOp::lrn_scale> : LrnSemantics {
  using Args = MathArgs<MathOp::lrn_scale>;
  static std::array<Operand, 2> operands(const Args& a) {
    const std::int64_t n = SoftmaxShape::of(a).count();
    return {{{"bottom", a.bottom, a.bottom_offset, n, true, false}, {"scale", a.scale, a.scale_offset, n, false, true}}};
  }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    lrn_scale<T>(SoftmaxShape::of(a), a.size, static_cast<T>(a.alpha_over_size), static_cast<T>(a.k), p[0], p[1]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) { s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "lrn_scale"; }
};

template <>
struct MathSemantics<MathOp::lrn_backward> : LrnSemantics {
  using Args = MathArgs<MathOp::lrn_backward>;
  static std::array<Operand, 5> operands(const Args& a) {
    const std::int64_t n = SoftmaxShape::of(a).count();
    return {{{"bottom", a.bottom, a.bottom_offset, n, true, false},
             {"top", a.top, a.top_offset, n, true, false},
             {"scale", a.scale, a.scale_offset, n, true, false},
             {"top_diff", a.top_diff, a.top_diff_offset, n, true, false},
             {"bottom_diff", a.bottom_diff, a.bottom_diff_offset, n, false, true}}};
  }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    lrn_backward<T>(SoftmaxShape::of(a), a.size, static_cast<T>(a.negative_beta), static_cast<T>(a.cache_ratio), p[0],
                    p[1], p[2], p[3], p[4]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "lrn_backward";
  }
};

}  // namespace blobrt_kernels

#endif
