// ClipLayer's GPU methods in blobrt's operations (clip_layer.cu's kernels: the clip and
// clip_backward element-wise codes, clip_param's min and max as alpha and beta, in Dtype as
// the .cu passes them; the backward reads the bottom).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_CLIP_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_CLIP_LAYER_HPP

#include <utility>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ClipMethods {
  static std::pair<Dtype, Dtype> range(void* layer) {
    const auto& p = static_cast<caffe::Layer<Dtype>*>(layer)->layer_param().clip_param();
    return {static_cast<Dtype>(p.min()), static_cast<Dtype>(p.max())};
  }
  static bool forward(void* layer, const void* bottom, const void* top) {
    const auto [low, high] = range(layer);
    return neuron_forward<Dtype>(blobrt::ElementwiseOp::kClip, low, bottom, top, high);
  }
  static bool backward(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
    const auto [low, high] = range(layer);
    return neuron_backward<Dtype>(blobrt::ElementwiseOp::kClipBackward, low, false, top, propagate_down, bottom, high);
  }
};

namespace {
const bool clip_layer_registered = register_both<ClipMethods>("ClipLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_CLIP_LAYER_HPP
