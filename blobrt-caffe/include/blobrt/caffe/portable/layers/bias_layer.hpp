// BiasLayer's GPU methods in blobrt's operations, as bias_layer.cu computes them: the bias
// added per channel by channel_affine; backward the top's diff copied down (unless in place)
// and the bias's gradient summed by gemv per outer index against a vector of ones, as Caffe's.
// BVLC's BiasLayer keeps its extents private: they are worked out here as its Reshape does,
// from the layer's parameter and the blobs' shapes, and the ones come from blobrt-caffe's
// scratch (Caffe's bias_multiplier_ being private too).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_BIAS_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_BIAS_LAYER_HPP

#include <cstddef>
#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt/caffe/portable/scratch.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct BiasMethods : caffe::BiasLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::BiasLayer<Dtype>;
  using Self = BiasMethods;
  struct Extents {
    caffe::Blob<Dtype>* bias;
    std::int64_t outer, channels, inner;
  };
  // BiasLayer::Reshape's: the bias a second bottom or the parameter; a scalar bias at axis 0.
  static Extents extents(Layer& l, const std::vector<caffe::Blob<Dtype>*>& bottom) {
    caffe::Blob<Dtype>* bias = bottom.size() > 1 ? bottom[1] : (l.*(&Self::blobs_))[0].get();
    const int axis = bias->num_axes() == 0 ? 0 : bottom[0]->CanonicalAxisIndex(l.layer_param().bias_param().axis());
    return {bias, bottom[0]->count(0, axis), bias->count(), bottom[0]->count(axis + bias->num_axes())};
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const Extents e = extents(l, bottom);
    const Dtype* bias = e.bias->gpu_data();
    const Dtype* x = bottom[0]->gpu_data();
    Dtype* y = top.mutable_gpu_data();
    device().channel_affine(precision_of<Dtype>(), e.outer, e.channels, e.inner, x, 0, nullptr, 0, bias, 0, y, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    if (!propagate_down.empty() && propagate_down[0] && bottom[0] != &top && bottom[0]->count() > 0) {
      device().copy_device(top.gpu_diff(), 0, bottom[0]->mutable_gpu_diff(), 0,
                           static_cast<std::size_t>(bottom[0]->count()) * sizeof(Dtype));
    }
    const bool bias_param = bottom.size() == 1;
    const bool wanted = bias_param ? bool((l.*(&Self::param_propagate_down_))[0])
                                   : propagate_down.size() > 1 && propagate_down[1];
    if (!wanted) return true;
    const Extents e = extents(l, bottom);
    const blobrt::Precision p = precision_of<Dtype>();
    const Dtype* top_diff = top.gpu_diff();
    Dtype* bias_diff = e.bias->mutable_gpu_diff();
    Dtype* ones = scratch<Dtype>(0, static_cast<int>(e.inner));
    device().elementwise(p, blobrt::ElementwiseOp::kSet, e.inner, 1.0, 0, nullptr, 0, nullptr, 0, ones, 0);
    bool accumulate = bias_param;
    for (std::int64_t n = 0; n < e.outer; ++n) {
      device().gemv(p, blobrt::Transpose::kNo, e.channels, e.inner, 1.0, top_diff, n * e.channels * e.inner, ones, 0,
                    accumulate ? 1.0 : 0.0, bias_diff, 0);
      accumulate = true;
    }
    return true;
  }
};

namespace {
const bool bias_layer_registered = register_both<BiasMethods>("BiasLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_BIAS_LAYER_HPP
