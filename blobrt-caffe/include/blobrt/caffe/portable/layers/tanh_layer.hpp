// TanHLayer's GPU methods in blobrt's operations (tanh_layer.cu's kernels: the tanh and
// tanh_backward element-wise codes; the backward reads the top's data, as the .cu does).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_TANH_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_TANH_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {
namespace {
const bool tanh_layer_registered = register_both<
    ParameterlessNeuron<blobrt::ElementwiseOp::kTanh, blobrt::ElementwiseOp::kTanhBackward>::Methods>("TanHLayer");
}
}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_TANH_LAYER_HPP
