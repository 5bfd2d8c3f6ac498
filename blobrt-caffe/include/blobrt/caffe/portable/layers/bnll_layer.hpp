// BNLLLayer's GPU methods in blobrt's operations (bnll_layer.cu's kernels: the bnll and
// bnll_backward element-wise codes; the backward reads the bottom).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_BNLL_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_BNLL_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {
namespace {
const bool bnll_layer_registered = register_both<
    ParameterlessNeuron<blobrt::ElementwiseOp::kBnll, blobrt::ElementwiseOp::kBnllBackward, false>::Methods>(
    "BNLLLayer");
}
}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_BNLL_LAYER_HPP
