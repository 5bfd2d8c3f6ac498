// ELULayer's GPU methods in blobrt's operations (elu_layer.cu's kernels: the elu and
// elu_backward element-wise codes, with elu_param's alpha). The backward reads the top's data
// for the .cu's bottom > 0 too, the same test where alpha >= 0; a negative alpha (where
// they differ) runs the CPU code backward.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_ELU_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_ELU_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ELUMethods {
  static double alpha(void* layer) {
    return static_cast<caffe::Layer<Dtype>*>(layer)->layer_param().elu_param().alpha();
  }
  static bool forward(void* layer, const void* bottom, const void* top) {
    return neuron_forward<Dtype>(blobrt::ElementwiseOp::kElu, alpha(layer), bottom, top);
  }
  static bool backward(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
    const double a = alpha(layer);
    if (!(a >= 0)) return false;
    return neuron_backward<Dtype>(blobrt::ElementwiseOp::kEluBackward, a, true, top, propagate_down, bottom);
  }
};

namespace {
const bool elu_layer_registered = register_both<ELUMethods>("ELULayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_ELU_LAYER_HPP
