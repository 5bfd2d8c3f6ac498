// channel_affine (blobrt/math_operations.h): top = bottom * scale[c] + bias[c] along the
// middle axis of an outer x channels x inner array, either factor absent (a null buffer),
// Caffe's ScaleForward, ScaleBiasForward and BiasForward kernels (scale_layer.cu,
// bias_layer.cu) in one form, each in its own expression. The host kernel and its
// MathSemantics (blobrt_kernels/math_operation.hpp).
#ifndef BLOBRT_KERNELS_CHANNEL_AFFINE_HPP
#define BLOBRT_KERNELS_CHANNEL_AFFINE_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"
#include "blobrt_kernels/softmax.hpp"

namespace blobrt_kernels {

// One row of `inner` elements that share channel c's factors.
template <typename T>
void channel_affine_row(std::int64_t inner, const T* x, const T* scale, const T* bias, T* y) {
  if (scale && bias) {
    const T s = *scale, b = *bias;
    for (std::int64_t i = 0; i < inner; ++i) y[i] = x[i] * s + b;
  } else if (scale) {
    const T s = *scale;
    for (std::int64_t i = 0; i < inner; ++i) y[i] = x[i] * s;
  } else if (bias) {
    const T b = *bias;
    for (std::int64_t i = 0; i < inner; ++i) y[i] = x[i] + b;
  } else {
    std::copy_n(x, inner, y);
  }
}

template <>
struct MathSemantics<MathOp::channel_affine> {
  using Args = MathArgs<MathOp::channel_affine>;
  static std::array<Operand, 4> operands(const Args& a) {
    const std::int64_t n = SoftmaxShape::of(a).count(), channels = n == 0 ? 0 : a.channels;
    return {{{"bottom", a.bottom, a.bottom_offset, n, true, false},
             {"scale", a.scale, a.scale_offset, a.scale ? channels : 0, true, false},
             {"bias", a.bias, a.bias_offset, a.bias ? channels : 0, true, false},
             {"top", a.top, a.top_offset, n, false, true}}};
  }
  static const char* invalid(const Args& a) { return SoftmaxShape::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const std::int64_t rows = a.outer * a.channels, inner = a.inner, channels = a.channels;
    if (rows == 0 || inner == 0) return true;
    parallel_for(
        rows,
        [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t r = begin; r < end; ++r) {
            const std::int64_t c = r % channels;
            channel_affine_row<T>(inner, p[0] + r * inner, p[1] ? p[1] + c : nullptr, p[2] ? p[2] + c : nullptr,
                                  p[3] + r * inner);
          }
        },
        std::max<std::int64_t>(1, kParallelThreshold / inner));
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "channel_affine";
  }
};

}  // namespace blobrt_kernels

#endif
