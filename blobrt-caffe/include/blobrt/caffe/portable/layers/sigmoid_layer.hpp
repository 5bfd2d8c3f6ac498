// SigmoidLayer's GPU methods in blobrt's operations (sigmoid_layer.cu's kernels: the sigmoid and
// sigmoid_backward element-wise codes; the backward reads the top's data, as the .cu does).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SigmoidMethods {
  static bool forward(void*, const void* bottom, const void* top) {
    return neuron_forward<Dtype>(blobrt::ElementwiseOp::kSigmoid, 0, bottom, top);
  }
  static bool backward(void*, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
    return neuron_backward<Dtype>(blobrt::ElementwiseOp::kSigmoidBackward, 0, true, top, propagate_down, bottom);
  }
};

namespace {
const bool sigmoid_layer_registered = register_both<SigmoidMethods>("SigmoidLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_LAYER_HPP
