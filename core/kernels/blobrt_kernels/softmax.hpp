// Caffe's softmax along an axis (src/caffe/layers/softmax_layer.cpp and .cu): the host kernels
// and their MathSemantics (blobrt_kernels/math_operation.hpp). The array is outer x channels
// x inner (channels: the softmax axis); each (outer, inner) position is one softmax over its
// channels, computed as Caffe's GPU kernels do: the channels' maximum, exp(x - max), the sum
// over the channels in channel order, the division. Backward: the channels' dot product of
// top_diff and top, then (top_diff - dot) * top. Each position reads all its channels before
// it writes any, so top may be bottom and bottom_diff top_diff (Caffe's in-place layers).
#ifndef BLOBRT_KERNELS_SOFTMAX_HPP
#define BLOBRT_KERNELS_SOFTMAX_HPP

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

struct SoftmaxShape {
  std::int64_t outer, channels, inner;

  template <class Args>
  static SoftmaxShape of(const Args& a) {
    return {a.outer, a.channels, a.inner};
  }
  // 0 where the product would not fit in 64 bits (invalid() then refuses the call).
  std::int64_t count() const {
    std::int64_t n = 0;
    if (__builtin_mul_overflow(outer, channels, &n) || __builtin_mul_overflow(n, inner, &n)) return 0;
    return n;
  }
  const char* invalid() const {
    return outer && channels && inner && count() == 0 ? "the shape's element count overflows 64 bits" : nullptr;
  }
  // fn(position, its first element, the stride between channels) for every (outer, inner)
  // position, split across the team.
  template <class Fn>
  void for_each_position(Fn fn) const {
    parallel_for(
        outer * inner,
        [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t q = begin; q < end; ++q) fn(q, q / inner * channels * inner + q % inner, inner);
        },
        std::max<std::int64_t>(1, kParallelThreshold / std::max<std::int64_t>(1, channels)));
  }
};

template <typename T>
void softmax(const SoftmaxShape& s, const T* bottom, T* top) {
  s.for_each_position([&](std::int64_t, std::int64_t first, std::int64_t stride) {
    const T* x = bottom + first;
    T* y = top + first;
    T max = x[0];
    for (std::int64_t c = 1; c < s.channels; ++c) max = std::max(max, x[c * stride]);
    T sum = T(0);
    for (std::int64_t c = 0; c < s.channels; ++c) {
      y[c * stride] = std::exp(x[c * stride] - max);
      sum += y[c * stride];
    }
    for (std::int64_t c = 0; c < s.channels; ++c) y[c * stride] /= sum;
  });
}

template <typename T>
void softmax_backward(const SoftmaxShape& s, const T* top, const T* top_diff, T* bottom_diff) {
  s.for_each_position([&](std::int64_t, std::int64_t first, std::int64_t stride) {
    const T* y = top + first;
    const T* dy = top_diff + first;
    T* dx = bottom_diff + first;
    T dot = T(0);
    for (std::int64_t c = 0; c < s.channels; ++c) dot += dy[c * stride] * y[c * stride];
    for (std::int64_t c = 0; c < s.channels; ++c) dx[c * stride] = (dy[c * stride] - dot) * y[c * stride];
  });
}

template <>
struct MathSemantics<MathOp::softmax> {
  using Args = MathArgs<MathOp::softmax>;
  static std::array<Operand, 2> operands(const Args& a) {
    const std::int64_t n = SoftmaxShape::of(a).count();
    return {{{"bottom", a.bottom, a.bottom_offset, n, true, false}, {"top", a.top, a.top_offset, n, false, true}}};
  }
  static const char* invalid(const Args& a) { return SoftmaxShape::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    softmax<T>(SoftmaxShape::of(a), p[0], p[1]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) { s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "softmax"; }
};

template <>
struct MathSemantics<MathOp::softmax_backward> {
  using Args = MathArgs<MathOp::softmax_backward>;
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t n = SoftmaxShape::of(a).count();
    return {{{"top", a.top, a.top_offset, n, true, false},
             {"top_diff", a.top_diff, a.top_diff_offset, n, true, false},
             {"bottom_diff", a.bottom_diff, a.bottom_diff_offset, n, false, true}}};
  }
  static const char* invalid(const Args& a) { return SoftmaxShape::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    softmax_backward<T>(SoftmaxShape::of(a), p[0], p[1], p[2]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "softmax_backward";
  }
};

}  // namespace blobrt_kernels

#endif
