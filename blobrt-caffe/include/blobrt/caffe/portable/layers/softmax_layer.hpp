// SoftmaxLayer's GPU methods in blobrt's operations (softmax_layer.cu's kernels: softmax and
// softmax_backward over the layer's own outer x channels x inner split, as Reshape made it
// from its axis). SoftmaxWithLossLayer's softmax runs through this layer's Forward, so its
// probabilities are computed here too; its loss is its own code.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SOFTMAX_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SOFTMAX_LAYER_HPP

#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SoftmaxMethods : caffe::SoftmaxLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::SoftmaxLayer<Dtype>;
  struct Shape {
    std::int64_t outer, channels, inner;
  };
  // A pointer to a protected member formed through this class applies to any SoftmaxLayer.
  static Shape shape(void* layer, const caffe::Blob<Dtype>& bottom) {
    const Layer& l = layer_as<const Layer, Dtype>(layer);
    return {l.*(&SoftmaxMethods::outer_num_), bottom.shape(l.*(&SoftmaxMethods::softmax_axis_)),
            l.*(&SoftmaxMethods::inner_num_)};
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const Shape s = shape(layer, bottom);
    device().softmax(precision_of<Dtype>(), s.outer, s.channels, s.inner, bottom.gpu_data(), 0, top.mutable_gpu_data(),
                     0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const Shape s = shape(layer, bottom);
    device().softmax_backward(precision_of<Dtype>(), s.outer, s.channels, s.inner, top.gpu_data(), 0, top.gpu_diff(), 0,
                              bottom.mutable_gpu_diff(), 0);
    return true;
  }
};

namespace {
const bool softmax_layer_registered = register_both<SoftmaxMethods>("SoftmaxLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SOFTMAX_LAYER_HPP
