// PoolingLayer's GPU methods in blobrt's operations (pooling_layer.cu's kernels: max_pool,
// ave_pool and their backward operations). The geometry is the layer's own (its kernel,
// stride, padding and pooled extents as LayerSetUp and Reshape computed them, global
// pooling and a fork's rounding included). Max pooling keeps no mask: the backward finds
// each window's maximum again in the bottom data, Caffe's first maximum, so the gradient is
// the mask-based one. Declined (the layer's CPU code runs): a second top (the mask as an
// output), which only Caffe's own kernels and CPU code write; stochastic pooling, which
// Caffe's CPU code does not implement either (it fails there as in a CPU_ONLY build).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_POOLING_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_POOLING_LAYER_HPP

#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct PoolingMethods : caffe::PoolingLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::PoolingLayer<Dtype>;
  struct Geometry {
    std::int64_t planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  };
  // A pointer to a protected member formed through this class applies to any PoolingLayer.
  static Geometry geometry(const Layer& l, const caffe::Blob<Dtype>& bottom) {
    return {static_cast<std::int64_t>(bottom.num()) * bottom.channels(),
            l.*(&PoolingMethods::height_),
            l.*(&PoolingMethods::width_),
            l.*(&PoolingMethods::pooled_height_),
            l.*(&PoolingMethods::pooled_width_),
            l.*(&PoolingMethods::kernel_h_),
            l.*(&PoolingMethods::kernel_w_),
            l.*(&PoolingMethods::stride_h_),
            l.*(&PoolingMethods::stride_w_),
            l.*(&PoolingMethods::pad_h_),
            l.*(&PoolingMethods::pad_w_)};
  }
  static const Layer& layer_of(void* layer) {
    return layer_as<const Layer, Dtype>(layer);
  }
  static bool is_max(const Layer& l) {
    return l.layer_param().pooling_param().pool() == caffe::PoolingParameter_PoolMethod_MAX;
  }
  static bool is_ave(const Layer& l) {
    return l.layer_param().pooling_param().pool() == caffe::PoolingParameter_PoolMethod_AVE;
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const Layer& l = layer_of(layer);
    const auto& top = blobs<Dtype>(top_erased);
    if (top.size() != 1 || !(is_max(l) || is_ave(l))) return false;
    const caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const Geometry g = geometry(l, bottom);
    const auto call = is_max(l) ? &blobrt::Device::max_pool : &blobrt::Device::ave_pool;
    (device().*call)(precision_of<Dtype>(), g.planes, g.height, g.width, g.pooled_h, g.pooled_w, g.kernel_h,
                     g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, bottom.gpu_data(), 0,
                     top[0]->mutable_gpu_data(), 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    const Layer& l = layer_of(layer);
    if (blobs<Dtype>(top_erased).size() != 1 || !(is_max(l) || is_ave(l))) return false;
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const Geometry g = geometry(l, bottom);
    if (is_max(l)) {
      device().max_pool_backward(precision_of<Dtype>(), g.planes, g.height, g.width, g.pooled_h, g.pooled_w,
                                 g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, bottom.gpu_data(), 0,
                                 top.gpu_diff(), 0, bottom.mutable_gpu_diff(), 0);
    } else {
      device().ave_pool_backward(precision_of<Dtype>(), g.planes, g.height, g.width, g.pooled_h, g.pooled_w,
                                 g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, top.gpu_diff(), 0,
                                 bottom.mutable_gpu_diff(), 0);
    }
    return true;
  }
};

namespace {
const bool pooling_layer_registered = register_both<PoolingMethods>("PoolingLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_POOLING_LAYER_HPP
