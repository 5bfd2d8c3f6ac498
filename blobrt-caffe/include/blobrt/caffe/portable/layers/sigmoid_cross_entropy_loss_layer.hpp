// SigmoidCrossEntropyLossLayer's GPU methods in blobrt's element-wise operations, as
// sigmoid_cross_entropy_loss_layer.cu computes them. Forward: the probabilities by the
// layer's own SigmoidLayer (sigmoid_layer.hpp's methods), each element's log-likelihood by
// sigmoid_cross_entropy into bottom[0]'s diff (Caffe's scratch), cleared by zero_where_label
// where the target is the ignore label, summed by asum (the one number back on the host: the
// loss Caffe prints). With VALID normalization and an ignore label the targets kept are counted
// on the device as the .cu counts them (ones in bottom[1]'s diff, the ignored cleared, asum),
// so no label crosses to the host. Both scratch diffs cleared afterwards (Caffe's #6202).
// Backward: sigmoid - target in one pass (the .cu's copy and axpy by -1 round alike), the
// ignored cleared, scaled by the top's diff over the forward's normalizer_.
//
// A tree whose layer has no normalization modes (py-faster-rcnn's Caffe, whose .cu has a
// backward only) registers nothing here: the layer's own code runs, as before. SSD's and
// OpenPose's Caffe have BVLC's layer and get these methods.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP

#include <cstdint>
#include <type_traits>
#include <utility>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SigmoidCrossEntropyLossMethods : caffe::SigmoidCrossEntropyLossLayer<Dtype> {  // never made
  using Layer = caffe::SigmoidCrossEntropyLossLayer<Dtype>;
  using Self = SigmoidCrossEntropyLossMethods;
  using Op = blobrt::ElementwiseOp;

  // Whether the layer is BVLC's of 2017 on (ignore label, normalization modes, normalizer_).
  template <class S, class = void>
  struct HasNormalizer : std::false_type {};
  template <class S>
  struct HasNormalizer<S, std::void_t<decltype(&S::get_normalizer), decltype(&S::normalization_),
                                      decltype(&S::normalizer_), decltype(&S::has_ignore_label_)>>
      : std::true_type {};
  static constexpr bool kSupported = HasNormalizer<Self>::value;

  // Whether the targets kept are counted: VALID with an ignore label (named through S, so a
  // tree whose LossParameter has no modes never looks for them).
  template <class S = Self>
  static bool counts_valid(const Layer& l) {
    using LossParameter = std::decay_t<decltype(std::declval<const S&>().layer_param().loss_param())>;
    return l.*(&S::normalization_) == LossParameter::VALID && l.*(&S::has_ignore_label_);
  }

  // y cleared where the target is the ignore label, if the layer has one.
  static void clear_ignored(const Layer& l, std::int64_t count, const Dtype* target, Dtype* y) {
    if (!(l.*(&Self::has_ignore_label_))) return;
    device().elementwise(precision_of<Dtype>(), Op::kZeroWhereLabel, count, l.*(&Self::ignore_label_), 0.0, target, 0,
                         nullptr, 0, y, 0);
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    (l.*(&Self::sigmoid_bottom_vec_))[0] = bottom[0];
    (l.*(&Self::sigmoid_layer_))->Forward(l.*(&Self::sigmoid_bottom_vec_), l.*(&Self::sigmoid_top_vec_));
    const std::int64_t count = bottom[0]->count();
    const blobrt::Precision p = precision_of<Dtype>();
    Dtype loss = 0, valid_count = static_cast<Dtype>(count);
    if (count > 0) {
      const Dtype* target = bottom[1]->gpu_data();
      Dtype* loss_data = bottom[0]->mutable_gpu_diff();
      device().elementwise(p, Op::kSigmoidCrossEntropy, count, 0.0, 0.0, bottom[0]->gpu_data(), 0, target, 0,
                           loss_data, 0);
      clear_ignored(l, count, target, loss_data);
      if (counts_valid(l)) {
        Dtype* count_data = bottom[1]->mutable_gpu_diff();
        fill(count, 1, count_data);
        clear_ignored(l, count, target, count_data);
        device().asum(count, count_data, 0, &valid_count);
      }
      device().asum(count, loss_data, 0, &loss);
    }
    Dtype& normalizer = l.*(&Self::normalizer_);
    normalizer = (l.*(&Self::get_normalizer))(l.*(&Self::normalization_), static_cast<int>(valid_count));
    top[0]->mutable_cpu_data()[0] = loss / normalizer;
    // Clear the scratch, as Caffe does (its #6202: Backward must not see it).
    if (count > 0) fill(count, 0, bottom[0]->mutable_gpu_diff());
    if (bottom[1]->count() > 0) fill(bottom[1]->count(), 0, bottom[1]->mutable_gpu_diff());
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    // To the targets: the layer's own code fails as Caffe's does.
    if (propagate_down.size() > 1 && propagate_down[1]) return false;
    if (propagate_down.empty() || !propagate_down[0]) return true;
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const std::int64_t count = bottom[0]->count();
    const Dtype loss_weight = top[0]->cpu_diff()[0] / l.*(&Self::normalizer_);
    if (count == 0) return true;
    const blobrt::Precision p = precision_of<Dtype>();
    const Dtype* target = bottom[1]->gpu_data();
    Dtype* diff = bottom[0]->mutable_gpu_diff();
    device().elementwise(p, Op::kSub, count, 0.0, 0.0, (l.*(&Self::sigmoid_output_))->gpu_data(), 0, target, 0, diff,
                         0);
    clear_ignored(l, count, target, diff);
    device().elementwise(p, Op::kScale, count, loss_weight, 0.0, diff, 0, nullptr, 0, diff, 0);
    return true;
  }
};

namespace {
const bool sigmoid_cross_entropy_loss_layer_registered =
    register_if_supported<SigmoidCrossEntropyLossMethods>("SigmoidCrossEntropyLossLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP
