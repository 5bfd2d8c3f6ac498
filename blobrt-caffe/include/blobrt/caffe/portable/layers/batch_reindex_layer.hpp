// BatchReindexLayer's GPU methods in blobrt's operations, as batch_reindex_layer.cu computes
// them: forward the bottom's items the index blob names (gather_rows), after Caffe's check of
// the indices on the host (the .cu reads them there too); backward each item's gradient the
// sum of the top's items that named it (set to 0, then scatter_add_rows in the top's order:
// Caffe's CPU order). An index outside the batch runs the CPU code, whose CHECK names it;
// backward to the indices too.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_BATCH_REINDEX_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_BATCH_REINDEX_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct BatchReindexMethods {
  // The bottom's items and the size of one, from Caffe's shapes.
  static std::int64_t items(const caffe::Blob<Dtype>& b) { return b.num_axes() == 0 ? 1 : b.shape(0); }
  static std::int64_t item_size(const caffe::Blob<Dtype>& b) {
    return items(b) == 0 ? 0 : b.count() / items(b);
  }

  static bool forward(void*, const void* bottom_erased, const void* top_erased) {
    const auto& bottom = blobs<Dtype>(bottom_erased);
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const std::int64_t batch = items(*bottom[0]), picks = bottom[1]->count();
    const Dtype* index = bottom[1]->cpu_data();
    for (std::int64_t i = 0; i < picks; ++i) {
      if (!(index[i] >= 0 && index[i] < batch)) return false;  // Caffe's CHECK says which
    }
    if (top.count() == 0) return true;
    device().gather_rows(precision_of<Dtype>(), picks, item_size(*bottom[0]), batch, bottom[1]->gpu_data(), 0,
                         bottom[0]->gpu_data(), 0, top.mutable_gpu_data(), 0);
    return true;
  }

  static bool backward(void*, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    if (propagate_down.size() > 1 && propagate_down[1]) return false;  // Caffe's CHECK, in its CPU code
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const blobrt::Precision p = precision_of<Dtype>();
    Dtype* diff = bottom[0]->mutable_gpu_diff();
    fill(bottom[0]->count(), 0, diff);
    device().scatter_add_rows(p, bottom[1]->count(), item_size(*bottom[0]), items(*bottom[0]), bottom[1]->gpu_data(),
                              0, blobs<Dtype>(top_erased)[0]->gpu_diff(), 0, diff, 0);
    return true;
  }
};

namespace {
const bool batch_reindex_layer_registered = register_both<BatchReindexMethods>("BatchReindexLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_BATCH_REINDEX_LAYER_HPP
