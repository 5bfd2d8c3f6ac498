// The multinomial logistic loss of softmax probabilities (Caffe's SoftmaxWithLossLayer,
// src/caffe/layers/softmax_loss_layer.cu): the host kernels and their MathSemantics
// (blobrt_kernels/math_operation.hpp). prob is outer x channels x inner (softmax's shape),
// label outer x inner. What a label means is label_class(): Caffe converts it to int toward
// zero and compares that with the layer's ignore_label; a label that is neither ignored nor a
// channel gives NaN, where Caffe's GPU kernel reads outside prob.
#ifndef BLOBRT_KERNELS_SOFTMAX_LOSS_HPP
#define BLOBRT_KERNELS_SOFTMAX_LOSS_HPP

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/softmax.hpp"

namespace blobrt_kernels {

// A label's class: its channel, or one of these.
constexpr std::int64_t kLabelIgnored = -1;
constexpr std::int64_t kLabelOutside = -2;

// Caffe's static_cast<int>(label), compared with ignore_label (NaN: none), then with the
// channels. A label that int cannot hold (NaN, ±inf, outside [-2^31, 2^31)) is outside.
template <typename T>
std::int64_t label_class(T label, double ignore_label, std::int64_t channels) {
  if (!(label >= T(-2147483648.0) && label < T(2147483648.0))) return kLabelOutside;
  const auto value = static_cast<std::int64_t>(label);  // toward zero, as static_cast<int>
  if (static_cast<double>(value) == ignore_label) return kLabelIgnored;
  return value >= 0 && value < channels ? value : kLabelOutside;
}

// What both operations check: the shape (as softmax's) and the ignore label, which Caffe
// holds in an int.
struct SoftmaxLossSemantics {
  template <class Args>
  static const char* invalid(const Args& a) {
    if (const char* why = SoftmaxShape::of(a).invalid()) return why;
    const double ignore = a.ignore_label;
    if (std::isnan(ignore)) return nullptr;
    if (!(ignore >= -2147483648.0 && ignore <= 2147483647.0) || ignore != std::trunc(ignore)) {
      return "ignore_label must be an int (or NaN: none)";
    }
    return nullptr;
  }
  template <class Args>
  static std::int64_t positions(const Args& a) {
    return SoftmaxShape::of(a).count() == 0 ? 0 : a.outer * a.inner;
  }
  // fn(position, its label's class, its first element of prob, the stride between channels)
  // for every position, split across the team.
  template <typename T, class Args, class Fn>
  static void for_each_position(const Args& a, const T* label, Fn fn) {
    SoftmaxShape::of(a).for_each_position([&](std::int64_t q, std::int64_t first, std::int64_t stride) {
      fn(q, label_class(label[q], a.ignore_label, a.channels), first, stride);
    });
  }
};

template <>
struct MathSemantics<MathOp::softmax_loss> : SoftmaxLossSemantics {
  using Args = MathArgs<MathOp::softmax_loss>;
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t q = positions(a);
    return {{{"prob", a.prob, a.prob_offset, SoftmaxShape::of(a).count(), true, false},
             {"label", a.label, a.label_offset, q, true, false},
             {"loss", a.loss, a.loss_offset, q, false, true}}};
  }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const T* prob = p[0];
    T* loss = p[2];
    for_each_position(a, p[1], [&](std::int64_t q, std::int64_t label, std::int64_t first, std::int64_t stride) {
      if (label == kLabelIgnored) {
        loss[q] = T(0);
      } else if (label == kLabelOutside) {
        loss[q] = std::numeric_limits<T>::quiet_NaN();
      } else {
        // fmax as Caffe's GPU kernel (CUDA's max): a NaN probability gives -log(FLT_MIN).
        loss[q] = -std::log(std::fmax(prob[first + label * stride], T(FLT_MIN)));
      }
    });
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "softmax_loss";
  }
};

template <>
struct MathSemantics<MathOp::softmax_loss_backward> : SoftmaxLossSemantics {
  using Args = MathArgs<MathOp::softmax_loss_backward>;
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t n = SoftmaxShape::of(a).count();
    return {{{"prob", a.prob, a.prob_offset, n, true, false},
             {"label", a.label, a.label_offset, positions(a), true, false},
             {"bottom_diff", a.bottom_diff, a.bottom_diff_offset, n, false, true}}};
  }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const T* prob = p[0];
    T* diff = p[2];
    const T scale = static_cast<T>(a.scale);
    const std::int64_t channels = a.channels;
    for_each_position(a, p[1], [&](std::int64_t, std::int64_t label, std::int64_t first, std::int64_t stride) {
      for (std::int64_t c = 0; c < channels; ++c) {
        const std::int64_t e = first + c * stride;
        T d = prob[e];
        if (label == kLabelIgnored) d = T(0);
        if (label == kLabelOutside) d = std::numeric_limits<T>::quiet_NaN();
        if (c == label) d -= T(1);
        diff[e] = d * scale;
      }
    });
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "softmax_loss_backward";
  }
};

}  // namespace blobrt_kernels

#endif
