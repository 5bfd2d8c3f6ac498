// ConcatLayer's GPU methods in blobrt's operations (concat_layer.cu's kernel: each bottom's
// rows into its place along the axis, and its diff back), one copy_rows per bottom, over the
// layer's own num_concats_ x concat_input_size_ split. One bottom: nothing, as Caffe (the top
// shares its data).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_CONCAT_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_CONCAT_LAYER_HPP

#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ConcatMethods : caffe::ConcatLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::ConcatLayer<Dtype>;
  struct Split {
    int axis;
    std::int64_t rows, inner;
  };
  static Split split(void* layer) {
    const Layer& l = *static_cast<const Layer*>(static_cast<caffe::Layer<Dtype>*>(layer));
    return {l.*(&ConcatMethods::concat_axis_), l.*(&ConcatMethods::num_concats_),
            l.*(&ConcatMethods::concat_input_size_)};
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const auto& bottom = blobs<Dtype>(bottom_erased);
    if (bottom.size() == 1) return true;
    const Split s = split(layer);
    Dtype* top = blobs<Dtype>(top_erased)[0]->mutable_gpu_data();
    for_each_part(bottom, s.axis, s.inner, [&](std::size_t i, std::int64_t columns, std::int64_t offset,
                                               std::int64_t whole) {
      device().copy_rows(precision_of<Dtype>(), s.rows, columns, bottom[i]->gpu_data(), 0, columns, top, offset,
                         whole);
    });
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    const auto& bottom = blobs<Dtype>(bottom_erased);
    if (bottom.size() == 1) return true;
    const Split s = split(layer);
    const Dtype* top_diff = blobs<Dtype>(top_erased)[0]->gpu_diff();
    for_each_part(bottom, s.axis, s.inner, [&](std::size_t i, std::int64_t columns, std::int64_t offset,
                                               std::int64_t whole) {
      if (i >= propagate_down.size() || !propagate_down[i]) return;
      device().copy_rows(precision_of<Dtype>(), s.rows, columns, top_diff, offset, whole,
                         bottom[i]->mutable_gpu_diff(), 0, columns);
    });
    return true;
  }
};

namespace {
const bool concat_layer_registered = register_both<ConcatMethods>("ConcatLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_CONCAT_LAYER_HPP
