// SliceLayer's GPU methods in blobrt's operations (slice_layer.cu's kernel: each top's rows
// out of the bottom along the axis, and the tops' diffs back into the bottom's), one
// copy_rows per top, over the layer's own num_slices_ x slice_size_ split. One top: nothing,
// as Caffe (it shares the bottom's data).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_SLICE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_SLICE_LAYER_HPP

#include <cstdint>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct SliceMethods : caffe::SliceLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::SliceLayer<Dtype>;
  struct Split {
    int axis;
    std::int64_t rows, inner;
  };
  static Split split(void* layer) {
    const Layer& l = *static_cast<const Layer*>(static_cast<caffe::Layer<Dtype>*>(layer));
    return {l.*(&SliceMethods::slice_axis_), l.*(&SliceMethods::num_slices_), l.*(&SliceMethods::slice_size_)};
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const auto& top = blobs<Dtype>(top_erased);
    if (top.size() == 1) return true;
    const Split s = split(layer);
    const Dtype* bottom = blobs<Dtype>(bottom_erased)[0]->gpu_data();
    for_each_part(top, s.axis, s.inner, [&](std::size_t i, std::int64_t columns, std::int64_t offset,
                                            std::int64_t whole) {
      device().copy_rows(precision_of<Dtype>(), s.rows, columns, bottom, offset, whole, top[i]->mutable_gpu_data(),
                         0, columns);
    });
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    const auto& top = blobs<Dtype>(top_erased);
    if (propagate_down.empty() || !propagate_down[0] || top.size() == 1) return true;
    const Split s = split(layer);
    Dtype* bottom_diff = blobs<Dtype>(bottom_erased)[0]->mutable_gpu_diff();
    for_each_part(top, s.axis, s.inner, [&](std::size_t i, std::int64_t columns, std::int64_t offset,
                                            std::int64_t whole) {
      device().copy_rows(precision_of<Dtype>(), s.rows, columns, top[i]->gpu_diff(), 0, columns, bottom_diff, offset,
                         whole);
    });
    return true;
  }
};

namespace {
const bool slice_layer_registered = register_both<SliceMethods>("SliceLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_SLICE_LAYER_HPP
