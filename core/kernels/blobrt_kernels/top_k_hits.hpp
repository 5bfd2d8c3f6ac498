// top_k_hits (blobrt/math_operations.h): whether each position's label is among its top_k
// scores, Caffe's AccuracyForwardGPU kernel (accuracy_layer.cu; its CPU code counts the same
// way). The host kernel and its MathSemantics (blobrt_kernels/math_operation.hpp). Labels are
// read as the softmax loss reads them (softmax_loss.hpp's label_class()).
#ifndef BLOBRT_KERNELS_TOP_K_HITS_HPP
#define BLOBRT_KERNELS_TOP_K_HITS_HPP

#include <array>
#include <cstdint>
#include <limits>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/softmax_loss.hpp"

namespace blobrt_kernels {

template <>
struct MathSemantics<MathOp::top_k_hits> : SoftmaxLossSemantics {
  using Args = MathArgs<MathOp::top_k_hits>;
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t q = positions(a);
    return {{{"scores", a.scores, a.scores_offset, SoftmaxShape::of(a).count(), true, false},
             {"label", a.label, a.label_offset, q, true, false},
             {"hits", a.hits, a.hits_offset, q, false, true}}};
  }
  static bool only_scales(const Args&, double*) { return false; }
  // Caffe's count: the channels scoring at least the label's (the label's own included, so
  // a tie counts against it), stopping once top_k are found; a hit when fewer than top_k.
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const T* scores = p[0];
    T* hits = p[2];
    const std::int64_t channels = a.channels, top_k = a.top_k;
    for_each_position(a, p[1], [&](std::int64_t q, std::int64_t label, std::int64_t first, std::int64_t stride) {
      if (label == kLabelIgnored) {
        hits[q] = T(0);
      } else if (label == kLabelOutside) {
        hits[q] = std::numeric_limits<T>::quiet_NaN();
      } else {
        const T truth = scores[first + label * stride];
        std::int64_t better = -1;
        for (std::int64_t c = 0; c < channels && better < top_k; ++c) better += scores[first + c * stride] >= truth;
        hits[q] = better < top_k ? T(1) : T(0);
      }
    });
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "top_k_hits";
  }
};

}  // namespace blobrt_kernels

#endif
