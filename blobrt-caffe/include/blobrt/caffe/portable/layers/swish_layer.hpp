// SwishLayer's GPU methods in blobrt's element-wise operations. Forward as swish_layer.cu:
// beta * x into the layer's sigmoid_input_, its sigmoid into sigmoid_output_ (what the .cu's
// inner SigmoidLayer computes), x times that into the top. Backward, SwishBackward's
// dy * (beta * y + s * (1 - beta * y)) in passes that round as the kernel's expression does
// (1 - b as -b + 1, exact), y the top's data and s the kept sigmoid_output_.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SWISH_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SWISH_LAYER_HPP

#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt/caffe/portable/scratch.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SwishMethods : caffe::SwishLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::SwishLayer<Dtype>;
  using Self = SwishMethods;
  using Op = blobrt::ElementwiseOp;

  static double beta(const Layer& l) { return static_cast<Dtype>(l.layer_param().swish_param().beta()); }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const std::int64_t count = bottom.count();
    const blobrt::Precision p = precision_of<Dtype>();
    Dtype* input = (l.*(&Self::sigmoid_input_))->mutable_gpu_data();
    Dtype* output = (l.*(&Self::sigmoid_output_))->mutable_gpu_data();
    Dtype* y = top.mutable_gpu_data();
    if (count == 0) return true;
    const Dtype* x = bottom.gpu_data();
    device().elementwise(p, Op::kScale, count, beta(l), 0.0, x, 0, nullptr, 0, input, 0);
    device().elementwise(p, Op::kSigmoid, count, 0.0, 0.0, input, 0, nullptr, 0, output, 0);
    device().elementwise(p, Op::kMul, count, 0.0, 0.0, x, 0, output, 0, y, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const std::int64_t count = bottom.count();
    const blobrt::Precision p = precision_of<Dtype>();
    const Dtype* y = top.gpu_data();
    const Dtype* dy = top.gpu_diff();
    const Dtype* s = (l.*(&Self::sigmoid_output_))->gpu_data();
    Dtype* dx = bottom.mutable_gpu_diff();
    if (count == 0) return true;
    Dtype* beta_y = scratch<Dtype>(0, static_cast<int>(count));
    Dtype* factor = scratch<Dtype>(1, static_cast<int>(count));
    device().elementwise(p, Op::kScale, count, beta(l), 0.0, y, 0, nullptr, 0, beta_y, 0);
    device().elementwise(p, Op::kScale, count, -1.0, 0.0, beta_y, 0, nullptr, 0, factor, 0);
    device().elementwise(p, Op::kAddScalar, count, 1.0, 0.0, nullptr, 0, nullptr, 0, factor, 0);
    device().elementwise(p, Op::kMul, count, 0.0, 0.0, s, 0, factor, 0, factor, 0);
    device().elementwise(p, Op::kAdd, count, 0.0, 0.0, beta_y, 0, factor, 0, factor, 0);
    device().elementwise(p, Op::kMul, count, 0.0, 0.0, dy, 0, factor, 0, dx, 0);
    return true;
  }
};

namespace {
const bool swish_layer_registered = register_both<SwishMethods>("SwishLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SWISH_LAYER_HPP
