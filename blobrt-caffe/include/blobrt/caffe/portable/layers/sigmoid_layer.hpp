// SigmoidLayer's GPU methods in blobrt's operations (sigmoid_layer.cu's kernels: the sigmoid and
// sigmoid_backward element-wise codes; the backward reads the top's data, as the .cu does).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {
namespace {
const bool sigmoid_layer_registered = register_both<
    ParameterlessNeuron<blobrt::ElementwiseOp::kSigmoid, blobrt::ElementwiseOp::kSigmoidBackward>::Methods>("SigmoidLayer");
}
}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SIGMOID_LAYER_HPP
