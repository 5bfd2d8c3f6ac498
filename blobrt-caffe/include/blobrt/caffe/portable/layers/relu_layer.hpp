// ReLULayer's GPU methods in blobrt's operations (relu_layer.cu's kernels: the relu and
// relu_backward element-wise codes, with relu_param's negative_slope).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_RELU_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_RELU_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ReLUMethods {
  static double slope(void* layer) {
    return static_cast<caffe::Layer<Dtype>*>(layer)->layer_param().relu_param().negative_slope();
  }
  static bool forward(void* layer, const void* bottom, const void* top) {
    return neuron_forward<Dtype>(blobrt::ElementwiseOp::kRelu, slope(layer), bottom, top);
  }
  static bool backward(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
    return neuron_backward<Dtype>(blobrt::ElementwiseOp::kReluBackward, slope(layer), false, top, propagate_down,
                                  bottom);
  }
};

namespace {
const bool relu_layer_registered = register_both<ReLUMethods>("ReLULayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_RELU_LAYER_HPP
