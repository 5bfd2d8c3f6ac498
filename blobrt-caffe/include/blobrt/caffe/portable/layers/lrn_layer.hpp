// LRNLayer's GPU methods in blobrt's operations, across channels as lrn_layer.cu computes it:
// the scale by lrn_scale into the layer's own scale_ (kept for backward), the output as
// bottom * scale^-beta by the element-wise powx and mul, the gradient by lrn_backward.
// Within a channel Caffe's LRN is a composition of its Split, Power, Pooling and Eltwise
// layers (their own GPU methods): declined here, so the layer's CPU code runs that
// composition, whose layers run on the device.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_LRN_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_LRN_LAYER_HPP

#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt/caffe/portable/scratch.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct LRNMethods : caffe::LRNLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::LRNLayer<Dtype>;
  using Self = LRNMethods;
  static bool across_channels(const Layer& l) {
    return l.layer_param().lrn_param().norm_region() == caffe::LRNParameter_NormRegion_ACROSS_CHANNELS;
  }
  struct Shape {
    std::int64_t outer, channels, inner, size;
  };
  static Shape shape(const Layer& l) {
    return {l.*(&Self::num_), l.*(&Self::channels_),
            static_cast<std::int64_t>(l.*(&Self::height_)) * (l.*(&Self::width_)), l.*(&Self::size_)};
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    if (!across_channels(l)) return false;
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& scale = l.*(&Self::scale_);
    const Shape s = shape(l);
    const Dtype alpha = l.*(&Self::alpha_), beta = l.*(&Self::beta_), k = l.*(&Self::k_);
    const blobrt::Precision p = precision_of<Dtype>();
    const std::int64_t count = bottom.count();
    Dtype* scale_data = scale.mutable_gpu_data();
    Dtype* top_data = top.mutable_gpu_data();
    if (count == 0) return true;
    device().lrn_scale(p, s.outer, s.channels, s.inner, s.size, Dtype(alpha / s.size), k, bottom.gpu_data(), 0,
                       scale_data, 0);
    // top = bottom * scale^-beta: Caffe's LRNComputeOutput in two passes, the same roundings.
    // In place (top is bottom) the power goes to a scratch first, so that the product reads
    // the bottom's values, as Caffe's kernel does element by element.
    Dtype* power = &top == &bottom ? scratch<Dtype>(0, static_cast<int>(count)) : top_data;
    device().elementwise(p, blobrt::ElementwiseOp::kPowx, count, Dtype(-beta), 0, scale_data, 0, nullptr, 0, power, 0);
    device().elementwise(p, blobrt::ElementwiseOp::kMul, count, 0, 0, bottom.gpu_data(), 0, power, 0, top_data, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    if (!across_channels(l)) return false;
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const caffe::Blob<Dtype>& scale = l.*(&Self::scale_);
    const Shape s = shape(l);
    const Dtype alpha = l.*(&Self::alpha_), beta = l.*(&Self::beta_);
    Dtype* bottom_diff = bottom.mutable_gpu_diff();
    if (bottom.count() == 0) return true;
    device().lrn_backward(precision_of<Dtype>(), s.outer, s.channels, s.inner, s.size, Dtype(-beta),
                          Dtype(2. * alpha * beta / s.size), bottom.gpu_data(), 0, top.gpu_data(), 0, scale.gpu_data(),
                          0, top.gpu_diff(), 0, bottom_diff, 0);
    return true;
  }
};

namespace {
const bool lrn_layer_registered = register_both<LRNMethods>("LRNLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_LRN_LAYER_HPP
