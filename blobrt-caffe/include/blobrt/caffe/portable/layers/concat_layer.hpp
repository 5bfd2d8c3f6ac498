// ConcatLayer's GPU methods in blobrt's operations (concat_layer.cu's kernel: each bottom's
// rows into its place along the axis, and its diff back), one copy_rows per bottom over the
// layer's own num_concats_ x concat_input_size_ split (layer_glue.hpp's copy_parts). One
// bottom: nothing, as Caffe (the top shares its data).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_CONCAT_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_CONCAT_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ConcatMethods : caffe::ConcatLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::ConcatLayer<Dtype>;
  using Self = ConcatMethods;
  static bool copy(void* layer, const std::vector<caffe::Blob<Dtype>*>& bottom, caffe::Blob<Dtype>& top,
                   const std::vector<bool>* wanted, bool backward) {
    if (bottom.size() == 1) return true;
    const Layer& l = layer_as<Layer, Dtype>(layer);
    copy_parts(l.*(&Self::num_concats_), l.*(&Self::concat_input_size_), l.*(&Self::concat_axis_), bottom, wanted,
               backward, !backward, top);
    return true;
  }
  static bool forward(void* layer, const void* bottom, const void* top) {
    return copy(layer, blobs<Dtype>(bottom), *blobs<Dtype>(top)[0], nullptr, false);
  }
  static bool backward(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
    return copy(layer, blobs<Dtype>(bottom), *blobs<Dtype>(top)[0], &propagate_down, true);
  }
};

namespace {
const bool concat_layer_registered = register_both<ConcatMethods>("ConcatLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_CONCAT_LAYER_HPP
