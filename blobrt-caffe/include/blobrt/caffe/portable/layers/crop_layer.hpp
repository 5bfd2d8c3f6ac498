// CropLayer's GPU methods in blobrt's operations: the top is the bottom's block at the layer's
// offsets (crop_layer.cu's crop_kernel_forward), and backward the bottom's gradient 0 but that
// block, the top's (caffe_gpu_set, then crop_kernel_backward). The block is copied by
// copy_rows over its last two axes (rows of the last axis, strided by the bottom's width),
// one call per index of the axes before them. The offsets are the layer's, read on the host
// (a Blob<int> in Caffe, a vector<int> in forks of 2016). Crops along an early axis of a large
// blob take many calls (one per index before the last two axes).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_CROP_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_CROP_LAYER_HPP

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

inline const int* crop_offsets(const caffe::Blob<int>& offsets) { return offsets.cpu_data(); }
inline const int* crop_offsets(const std::vector<int>& offsets) { return offsets.data(); }

template <typename Dtype>
struct CropMethods : caffe::CropLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::CropLayer<Dtype>;
  using Self = CropMethods;

  // Whether the layer keeps its offsets along every axis as `offsets` (BVLC's since 2016);
  // else (FCN's fork: crop_h_, crop_w_) nothing is registered and its CPU code runs.
  template <class S, class = void>
  struct HasOffsets : std::false_type {};
  template <class S>
  struct HasOffsets<S, std::void_t<decltype(crop_offsets(std::declval<S&>().offsets))>> : std::true_type {};
  static constexpr bool kSupported = HasOffsets<Self>::value;

  // Copies the block between the bottom (`whole`, at the offsets) and the top (`block`): into
  // the block (forward) or back into the whole (backward).
  static void copy_block(const Layer& l, const caffe::Blob<Dtype>& whole_blob, const caffe::Blob<Dtype>& block_blob,
                         const Dtype* from, Dtype* to, bool forward) {
    const int axes = block_blob.num_axes();
    if (block_blob.count() == 0) return;
    const int* offsets = crop_offsets(l.*(&Self::offsets));
    const blobrt::Precision p = precision_of<Dtype>();
    if (axes < 2) {
      const std::int64_t n = block_blob.count(), start = axes == 1 ? offsets[0] : 0;
      if (forward) device().copy_rows(p, 1, n, from, start, n, to, 0, n);
      else device().copy_rows(p, 1, n, from, 0, n, to, start, n);
      return;
    }
    const std::int64_t rows = block_blob.shape(axes - 2), columns = block_blob.shape(axes - 1),
                       whole_width = whole_blob.shape(axes - 1);
    const std::int64_t corner = std::int64_t(offsets[axes - 2]) * whole_width + offsets[axes - 1];
    // Every index of the axes before the last two, in row-major order.
    std::vector<int> index(axes - 2, 0);
    const std::int64_t planes = block_blob.count(0, axes - 2);
    for (std::int64_t plane = 0; plane < planes; ++plane) {
      std::int64_t whole_offset = corner, block_offset = 0;
      for (int i = 0; i < axes - 2; ++i) {
        whole_offset += std::int64_t(index[i] + offsets[i]) * whole_blob.count(i + 1);
        block_offset += std::int64_t(index[i]) * block_blob.count(i + 1);
      }
      if (forward) device().copy_rows(p, rows, columns, from, whole_offset, whole_width, to, block_offset, columns);
      else device().copy_rows(p, rows, columns, from, block_offset, columns, to, whole_offset, whole_width);
      for (int i = axes - 3; i >= 0 && ++index[i] == block_blob.shape(i); --i) index[i] = 0;
    }
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const Layer& l = layer_as<Layer, Dtype>(layer);
    const caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    copy_block(l, bottom, top, bottom.gpu_data(), top.mutable_gpu_data(), true);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    Dtype* diff = bottom.mutable_gpu_diff();
    fill(bottom.count(), 0, diff);
    copy_block(l, bottom, top, top.gpu_diff(), diff, false);
    return true;
  }
};

namespace {
const bool crop_layer_registered = register_if_supported<CropMethods>("CropLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_CROP_LAYER_HPP
