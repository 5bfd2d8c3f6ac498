// ScaleLayer's GPU methods in blobrt's operations, as scale_layer.cu computes them: forward
// the scale (and the bias of its bias term) per channel by channel_affine, the bottom kept in
// temp_ when in place; backward the bias term's gradient by its BiasLayer's Backward, the
// scale's gradient by Caffe's sequence (the product of top diff and bottom, summed over the
// inner then the outer dimension by gemv, or by dot where one side is 1), the bottom's by
// channel_affine with the scale.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SCALE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SCALE_LAYER_HPP

#include <cstddef>
#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ScaleMethods : caffe::ScaleLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::ScaleLayer<Dtype>;
  using Self = ScaleMethods;
  // The scale: a second bottom, else the layer's first parameter.
  static caffe::Blob<Dtype>* scale_of(Layer& l, const std::vector<caffe::Blob<Dtype>*>& bottom) {
    return bottom.size() > 1 ? bottom[1] : (l.*(&Self::blobs_))[0].get();
  }
  static std::size_t bytes(std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(Dtype); }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const std::int64_t count = top.count();
    if (bottom[0] == &top && count > 0) {  // in place: backward needs the bottom's data
      device().copy_device(bottom[0]->gpu_data(), 0, (l.*(&Self::temp_)).mutable_gpu_data(), 0, bytes(count));
    }
    const Dtype* scale = scale_of(l, bottom)->gpu_data();
    const Dtype* bias = l.*(&Self::bias_layer_) ? (l.*(&Self::blobs_))[l.*(&Self::bias_param_id_)]->gpu_data() : nullptr;
    const Dtype* x = bottom[0]->gpu_data();
    Dtype* y = top.mutable_gpu_data();
    device().channel_affine(precision_of<Dtype>(), l.*(&Self::outer_dim_), l.*(&Self::scale_dim_),
                            l.*(&Self::inner_dim_), x, 0, scale, 0, bias, 0, y, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& top = blobs<Dtype>(top_erased);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const std::vector<bool>& param_down = l.*(&Self::param_propagate_down_);
    if (l.*(&Self::bias_layer_) && param_down.back()) {
      (l.*(&Self::bias_layer_))->Backward(top, l.*(&Self::bias_propagate_down_), l.*(&Self::bias_bottom_vec_));
    }
    const bool scale_param = bottom.size() == 1;
    caffe::Blob<Dtype>* scale = scale_of(l, bottom);
    const bool wanted = scale_param ? bool(param_down[0]) : propagate_down.size() > 1 && propagate_down[1];
    if (wanted) scale_gradient(l, *top[0], *bottom[0], scale, scale_param);
    if (!propagate_down.empty() && propagate_down[0]) {
      const Dtype* top_diff = top[0]->gpu_diff();
      const Dtype* scale_data = scale->gpu_data();
      Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
      device().channel_affine(precision_of<Dtype>(), l.*(&Self::outer_dim_), l.*(&Self::scale_dim_),
                              l.*(&Self::inner_dim_), top_diff, 0, scale_data, 0, nullptr, 0, bottom_diff, 0);
    }
    return true;
  }

  // scale_layer.cu's gradient of the scale: the product top_diff * bottom in the scratch Caffe
  // picks, then its sums, accumulated into a parameter and written over a bottom.
  static void scale_gradient(Layer& l, caffe::Blob<Dtype>& top, caffe::Blob<Dtype>& bottom, caffe::Blob<Dtype>* scale,
                             bool scale_param) {
    const blobrt::Precision p = precision_of<Dtype>();
    const std::int64_t outer = l.*(&Self::outer_dim_), scale_dim = l.*(&Self::scale_dim_),
                       inner = l.*(&Self::inner_dim_), count = top.count();
    caffe::Blob<Dtype>& temp = l.*(&Self::temp_);
    caffe::Blob<Dtype>& sum_result = l.*(&Self::sum_result_);
    const bool in_place = &bottom == &top;
    const Dtype* top_diff = top.gpu_diff();
    const Dtype* bottom_data = (in_place ? &temp : &bottom)->gpu_data();
    const bool is_eltwise = bottom.count() == scale->count();
    Dtype* product =
        is_eltwise ? scale->mutable_gpu_diff() : (in_place ? temp.mutable_gpu_data() : bottom.mutable_gpu_diff());
    device().elementwise(p, blobrt::ElementwiseOp::kMul, count, 0, 0, top_diff, 0, bottom_data, 0, product, 0);
    if (is_eltwise) return;
    const Dtype* ones = (l.*(&Self::sum_multiplier_)).gpu_data();
    // dot(n, a, b) added to a parameter's host diff, or written over a bottom's.
    const auto dot_into_host_diff = [&](std::int64_t n, const Dtype* a, const Dtype* b) {
      Dtype result = 0;
      device().dot(n, a, 0, b, 0, &result);
      Dtype* scale_diff = scale->mutable_cpu_diff();
      *scale_diff = scale_param ? *scale_diff + result : result;
    };
    const Dtype* sums = nullptr;
    if (inner == 1) {
      sums = product;
    } else if (sum_result.count() == 1) {
      dot_into_host_diff(inner, product, ones);
    } else {
      Dtype* out = outer == 1 ? scale->mutable_gpu_diff() : sum_result.mutable_gpu_data();
      device().gemv(p, blobrt::Transpose::kNo, sum_result.count(), inner, 1.0, product, 0, ones, 0, 0.0, out, 0);
      sums = out;
    }
    if (outer == 1) return;
    if (scale_dim == 1) {
      dot_into_host_diff(outer, ones, sums);
    } else {
      device().gemv(p, blobrt::Transpose::kYes, outer, scale_dim, 1.0, sums, 0, ones, 0, scale_param ? 1.0 : 0.0,
                    scale->mutable_gpu_diff(), 0);
    }
  }
};

namespace {
const bool scale_layer_registered = register_both<ScaleMethods>("ScaleLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SCALE_LAYER_HPP
