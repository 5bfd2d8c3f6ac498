// SoftmaxWithLossLayer's GPU methods in blobrt's operations, as softmax_loss_layer.cu computes
// them: the probabilities by the layer's own SoftmaxLayer (softmax_layer.hpp's methods), the
// loss per position by softmax_loss into bottom[0]'s diff (Caffe's scratch, cleared after),
// their sum by asum (the one number that comes back to the host: the loss Caffe prints), the
// gradient by softmax_loss_backward, scaled by the top's diff over the normalizer in one pass.
//
// With an ignore_label and VALID normalization the normalizer is the count of labels not
// ignored, which Caffe sums on the device; here the labels are read on the host and counted
// there (label_class(), as the operations read them): one copy of the labels per forward,
// the only traffic this layer adds (docs/performance.md).
//
// The normalizer is the layer's own get_normalizer (BVLC Caffe since 2016, OpenPose's Caffe),
// its LossLayer's GetNormalizer (SSD's Caffe, which moved it there), or, in a Caffe of 2015
// (py-faster-rcnn's), its normalize_ flag: the count of positions not ignored (no max with 1:
// that Caffe divides by 0 when every label is ignored), else the batch (outer_num_).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SOFTMAX_LOSS_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SOFTMAX_LOSS_LAYER_HPP

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt_kernels/softmax_loss.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SoftmaxWithLossMethods : caffe::SoftmaxWithLossLayer<Dtype> {  // never made: it names protected members
  using Layer = caffe::SoftmaxWithLossLayer<Dtype>;
  using Self = SoftmaxWithLossMethods;

  // Whether the layer has BVLC's get_normalizer and normalization_ (a member class may name
  // the protected members through this class).
  template <class S, class = void>
  struct HasNormalizer : std::false_type {};
  template <class S>
  struct HasNormalizer<S, std::void_t<decltype(&S::get_normalizer), decltype(&S::normalization_)>> : std::true_type {};
  // Whether it has SSD's LossLayer::GetNormalizer(mode, outer, inner, valid_count) instead.
  template <class S, class = void>
  struct HasLossLayerNormalizer : std::false_type {};
  template <class S>
  struct HasLossLayerNormalizer<S, std::void_t<decltype(&S::GetNormalizer), decltype(&S::normalization_)>>
      : std::true_type {};
  // Whether it is a 2015 layer with only the normalize_ flag.
  template <class S, class = void>
  struct HasNormalizeFlag : std::false_type {};
  template <class S>
  struct HasNormalizeFlag<S, std::void_t<decltype(&S::normalize_)>> : std::true_type {};
  static constexpr bool kSupported =
      HasNormalizer<Self>::value || HasLossLayerNormalizer<Self>::value || HasNormalizeFlag<Self>::value;

  struct Shape {
    std::int64_t outer, channels, inner;
    double ignore_label;  // NaN: none
  };
  static Shape shape(const Layer& l) {
    const std::int64_t outer = l.*(&Self::outer_num_), inner = l.*(&Self::inner_num_);
    const std::int64_t dim = outer == 0 ? 0 : (l.*(&Self::prob_)).count() / outer;  // Caffe's dim
    return {outer, inner == 0 ? 0 : dim / inner, inner,
            l.*(&Self::has_ignore_label_) ? static_cast<double>(l.*(&Self::ignore_label_))
                                          : std::numeric_limits<double>::quiet_NaN()};
  }

  // The positions whose label is not the ignore label (read on the host, as the operations
  // read labels).
  static int positions_kept(const Shape& s, const caffe::Blob<Dtype>& label) {
    const Dtype* labels = label.cpu_data();
    int kept = 0;
    for (std::int64_t q = 0; q < s.outer * s.inner; ++q) {
      kept += blobrt_kernels::label_class(labels[q], s.ignore_label, s.channels) != blobrt_kernels::kLabelIgnored;
    }
    return kept;
  }

  // loss / normalizer, as Caffe's Forward_gpu and Backward_gpu compute the normalizer: the
  // labels not ignored are counted only for VALID with an ignore label (-1 otherwise).
  template <class S = Self>
  static Dtype normalizer(Layer& l, const Shape& s, const caffe::Blob<Dtype>& label) {
    if constexpr (HasNormalizer<S>::value || HasLossLayerNormalizer<S>::value) {
      int valid_count = -1;
      // Named through S, so that a tree whose LossParameter has no modes never looks for them.
      using LossParameter = std::decay_t<decltype(std::declval<S&>().layer_param().loss_param())>;
      const auto mode = l.*(&S::normalization_);
      if (mode == LossParameter::VALID && l.*(&S::has_ignore_label_)) valid_count = positions_kept(s, label);
      if constexpr (HasNormalizer<S>::value) {
        return (l.*(&S::get_normalizer))(mode, valid_count);
      } else {
        return (l.*(&S::GetNormalizer))(mode, static_cast<int>(s.outer), static_cast<int>(s.inner), valid_count);
      }
    } else if constexpr (HasNormalizeFlag<S>::value) {
      if (!(l.*(&S::normalize_))) return Dtype(s.outer);
      return Dtype(l.*(&S::has_ignore_label_) ? positions_kept(s, label) : s.outer * s.inner);
    } else {
      return Dtype(1);  // never called: such a layer is not registered
    }
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    (l.*(&Self::softmax_layer_))->Forward(l.*(&Self::softmax_bottom_vec_), l.*(&Self::softmax_top_vec_));
    caffe::Blob<Dtype>& prob = l.*(&Self::prob_);
    const Shape s = shape(l);
    const std::int64_t positions = s.outer * s.inner;
    Dtype loss = 0;
    if (positions > 0 && s.channels > 0) {
      Dtype* scratch = bottom[0]->mutable_gpu_diff();  // Caffe's: at least one element per position
      device().softmax_loss(precision_of<Dtype>(), s.outer, s.channels, s.inner, prob.gpu_data(), 0,
                            bottom[1]->gpu_data(), 0, s.ignore_label, scratch, 0);
      device().asum(positions, scratch, 0, &loss);
    }
    top[0]->mutable_cpu_data()[0] = loss / normalizer(l, s, *bottom[1]);
    if (top.size() == 2) top[1]->ShareData(prob);
    // Clear the scratch, as Caffe does (its #6202: Backward must not see it).
    if (bottom[0]->count() > 0) {
      device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kSet, bottom[0]->count(), 0, 0, nullptr, 0,
                           nullptr, 0, bottom[0]->mutable_gpu_diff(), 0);
    }
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    // To the labels: the layer's own code fails as Caffe's does.
    if (propagate_down.size() > 1 && propagate_down[1]) return false;
    if (propagate_down.empty() || !propagate_down[0]) return true;
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const caffe::Blob<Dtype>& prob = l.*(&Self::prob_);
    const Shape s = shape(l);
    const Dtype loss_weight = top[0]->cpu_diff()[0] / normalizer(l, s, *bottom[1]);
    if (prob.count() == 0) return true;
    device().softmax_loss_backward(precision_of<Dtype>(), s.outer, s.channels, s.inner, prob.gpu_data(), 0,
                                   bottom[1]->gpu_data(), 0, s.ignore_label, loss_weight,
                                   bottom[0]->mutable_gpu_diff(), 0);
    return true;
  }
};

namespace {
const bool softmax_loss_layer_registered = register_if_supported<SoftmaxWithLossMethods>("SoftmaxWithLossLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SOFTMAX_LOSS_LAYER_HPP
