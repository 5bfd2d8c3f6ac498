// ThresholdLayer's GPU forward in blobrt's operations (threshold_layer.cu's kernel: the
// threshold element-wise code, with threshold_param's threshold). Caffe's layer has no
// backward.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_THRESHOLD_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_THRESHOLD_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ThresholdMethods {
  static bool forward(void* layer, const void* bottom, const void* top) {
    const double threshold = static_cast<caffe::Layer<Dtype>*>(layer)->layer_param().threshold_param().threshold();
    return neuron_forward<Dtype>(blobrt::ElementwiseOp::kThreshold, static_cast<Dtype>(threshold), bottom, top);
  }
};

namespace {
const bool threshold_layer_registered = register_forward<ThresholdMethods>("ThresholdLayer");  // the .cu has no backward
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_THRESHOLD_LAYER_HPP
