// SmoothL1LossLayer's GPU methods in blobrt's element-wise operations, as the forks'
// smooth_L1_loss_layer.cu compute them: the difference (times the inside weights where the
// layer has them), the element-wise smooth_l1 (ABI 1.11, alpha = sigma^2) into errors_, the
// sum read back as the loss (the one number on the host); backward smooth_l1_backward in place
// in diff_, scaled into each bottom's diff by the top's diff over the batch (and by the
// weights). Two forms of the layer:
// - py-faster-rcnn's (sigma2_, inside and outside weights; its CPU code is NOT_IMPLEMENTED,
//   so without these methods its GPU mode ran nowhere but on the cuda backend): the errors
//   times the outside weights summed as dot(outside weights, errors) before the product, so
//   no vector of ones (the layer's ones_, rewritten on the host at every Reshape) is uploaded;
// - SSD's (sigma 1, inside weights only), the errors summed by asum as its .cu sums them.
// A bottom's gradient is alpha * diff_ by the element-wise scale (the .cu's axpby with beta 0,
// without reading the old diff).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SMOOTH_L1_LOSS_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SMOOTH_L1_LOSS_LAYER_HPP

#include <cstdint>
#include <type_traits>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SmoothL1LossMethods : caffe::SmoothL1LossLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::SmoothL1LossLayer<Dtype>;
  using Self = SmoothL1LossMethods;
  using Op = blobrt::ElementwiseOp;

  // py-faster-rcnn's layer: sigma2_ and outside weights (bottom[3]); else SSD's (sigma 1).
  template <class S, class = void>
  struct HasSigma : std::false_type {};
  template <class S>
  struct HasSigma<S, std::void_t<decltype(&S::sigma2_)>> : std::true_type {};
  static constexpr bool kFasterRcnn = HasSigma<Self>::value;

  template <class S = Self>
  static double sigma2(const Layer& l) {
    if constexpr (HasSigma<S>::value) {
      return static_cast<double>(l.*(&S::sigma2_));
    } else {
      return 1.0;
    }
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const std::int64_t count = bottom[0]->count();
    const blobrt::Precision p = precision_of<Dtype>();
    const bool weights = l.*(&Self::has_weights_);
    caffe::Blob<Dtype>& diff = l.*(&Self::diff_);
    caffe::Blob<Dtype>& errors = l.*(&Self::errors_);
    Dtype loss = 0;
    if (count > 0) {
      device().elementwise(p, Op::kSub, count, 0.0, 0.0, bottom[0]->gpu_data(), 0, bottom[1]->gpu_data(), 0,
                           diff.mutable_gpu_data(), 0);  // d := b0 - b1
      if (weights) {
        device().elementwise(p, Op::kMul, count, 0.0, 0.0, bottom[2]->gpu_data(), 0, diff.gpu_data(), 0,
                             diff.mutable_gpu_data(), 0);  // d := w_in * (b0 - b1)
      }
      device().elementwise(p, Op::kSmoothL1, count, sigma2(l), 0.0, diff.gpu_data(), 0, nullptr, 0,
                           errors.mutable_gpu_data(), 0);
      if (kFasterRcnn && weights) {
        // sum(w_out * e) as one dot, then e := w_out * e as the .cu leaves errors_.
        device().dot(count, bottom[3]->gpu_data(), 0, errors.gpu_data(), 0, &loss);
        device().elementwise(p, Op::kMul, count, 0.0, 0.0, bottom[3]->gpu_data(), 0, errors.gpu_data(), 0,
                             errors.mutable_gpu_data(), 0);
      } else {
        device().asum(count, errors.gpu_data(), 0, &loss);  // every error is >= 0 here
      }
    }
    top[0]->mutable_cpu_data()[0] = loss / bottom[0]->num();
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    caffe::Blob<Dtype>& diff = l.*(&Self::diff_);
    const std::int64_t count = diff.count();
    const blobrt::Precision p = precision_of<Dtype>();
    if (count > 0) {
      device().elementwise(p, Op::kSmoothL1Backward, count, sigma2(l), 0.0, diff.gpu_data(), 0, nullptr, 0,
                           diff.mutable_gpu_data(), 0);
    }
    for (int i = 0; i < 2 && i < static_cast<int>(propagate_down.size()); ++i) {
      if (!propagate_down[i]) continue;
      const Dtype sign = i == 0 ? 1 : -1;
      const Dtype alpha = sign * top[0]->cpu_diff()[0] / bottom[i]->num();
      if (count == 0) continue;
      Dtype* out = bottom[i]->mutable_gpu_diff();
      device().elementwise(p, Op::kScale, count, alpha, 0.0, diff.gpu_data(), 0, nullptr, 0, out, 0);
      if (kFasterRcnn && l.*(&Self::has_weights_)) {
        device().elementwise(p, Op::kMul, count, 0.0, 0.0, bottom[2]->gpu_data(), 0, out, 0, out, 0);
        device().elementwise(p, Op::kMul, count, 0.0, 0.0, bottom[3]->gpu_data(), 0, out, 0, out, 0);
      }
    }
    return true;
  }
};

namespace {
const bool smooth_l1_loss_layer_registered = register_both<SmoothL1LossMethods>("SmoothL1LossLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SMOOTH_L1_LOSS_LAYER_HPP
