// SliceLayer's GPU methods in blobrt's operations (slice_layer.cu's kernel: each top's rows
// out of the bottom along the axis, and the tops' diffs back into the bottom's), one copy_rows
// per top over the layer's own num_slices_ x slice_size_ split (layer_glue.hpp's
// copy_parts). One top: nothing, as Caffe (it shares the bottom's data).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SLICE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SLICE_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SliceMethods : caffe::SliceLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::SliceLayer<Dtype>;
  using Self = SliceMethods;
  static bool copy(void* layer, caffe::Blob<Dtype>& bottom, const std::vector<caffe::Blob<Dtype>*>& top,
                   bool backward) {
    if (top.size() == 1) return true;
    const Layer& l = layer_as<Layer, Dtype>(layer);
    copy_parts(l.*(&Self::num_slices_), l.*(&Self::slice_size_), l.*(&Self::slice_axis_), top, nullptr, backward,
               backward, bottom);
    return true;
  }
  static bool forward(void* layer, const void* bottom, const void* top) {
    return copy(layer, *blobs<Dtype>(bottom)[0], blobs<Dtype>(top), false);
  }
  static bool backward(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
    if (propagate_down.empty() || !propagate_down[0]) return true;
    return copy(layer, *blobs<Dtype>(bottom)[0], blobs<Dtype>(top), true);
  }
};

namespace {
const bool slice_layer_registered = register_both<SliceMethods>("SliceLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SLICE_LAYER_HPP
