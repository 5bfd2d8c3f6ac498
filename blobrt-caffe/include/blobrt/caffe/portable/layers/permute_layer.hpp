// SSD's PermuteLayer (weiliu89/caffe ssd, permute_layer.cu: its heads' NCHW to NHWC) in blobrt's
// gather_rows and scatter_add_rows (plugin ABI 1.8): PermuteKernel's source index of every top
// element, worked out on the host from the layer's permute_order_, old_steps_ and new_steps_
// as the kernel works it out, kept on the device beside the layer (kept_buffer.hpp) and made
// again only when those change (Caffe's Reshape rewrites them at every forward, so the
// layer's own values are compared with a copy kept on the host). Forward gathers the bottom's
// elements in top order; backward clears the bottom's diff and adds each top element's back
// at its source (each source once: the .cu's values, but +0 for a -0 gradient). Without a
// permutation the top shares the bottom's data and the bottom the top's diff, as in the .cu.
// Indices are in the element type: a float blob of more than 2^24 elements runs the CPU code.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_PERMUTE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_PERMUTE_LAYER_HPP

#include <cstdint>
#include <cstring>
#include <vector>

#include <blobrt/caffe/portable/layers/kept_buffer.hpp>
#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct PermuteMethods : caffe::PermuteLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::PermuteLayer<Dtype>;
  using Self = PermuteMethods;

  // The device's array of each top element's source index for the layer's current shapes;
  // null where the indices would not be exact in Dtype.
  static const Dtype* source_indices(Layer& l, std::int64_t count) {
    if (count > (std::int64_t{1} << (sizeof(Dtype) == 4 ? 24 : 53))) return nullptr;
    const int axes = l.*(&Self::num_axes_);
    const int* order = (l.*(&Self::permute_order_)).cpu_data();
    const int* old_steps = (l.*(&Self::old_steps_)).cpu_data();
    const int* new_steps = (l.*(&Self::new_steps_)).cpu_data();
    // What the indices were made from: the count, then the three arrays.
    std::vector<std::int64_t> made_from{count};
    for (int i = 0; i < axes; ++i) made_from.insert(made_from.end(), {order[i], old_steps[i], new_steps[i]});
    const std::size_t signature_bytes = made_from.size() * sizeof(std::int64_t);
    blobrt::SyncedMemory* signature = kept_buffer((l.*(&Self::old_steps_)).data(), signature_bytes, false);
    blobrt::SyncedMemory* indices =
        kept_buffer((l.*(&Self::new_steps_)).data(), static_cast<std::size_t>(count) * sizeof(Dtype), false);
    if (signature && indices && std::memcmp(signature->cpu_data(), made_from.data(), signature_bytes) == 0) {
      return static_cast<const Dtype*>(indices->gpu_data());
    }
    signature = kept_buffer((l.*(&Self::old_steps_)).data(), signature_bytes, true);
    indices = kept_buffer((l.*(&Self::new_steps_)).data(), static_cast<std::size_t>(count) * sizeof(Dtype), true);
    if (!signature || !indices) return nullptr;
    Dtype* index = static_cast<Dtype*>(indices->mutable_cpu_data());
    for (std::int64_t i = 0; i < count; ++i) {  // PermuteKernel's old_idx of top element i
      std::int64_t rest = i, from = 0;
      for (int a = 0; a < axes; ++a) {
        from += rest / new_steps[a] * old_steps[order[a]];
        rest %= new_steps[a];
      }
      index[i] = static_cast<Dtype>(from);
    }
    std::memcpy(signature->mutable_cpu_data(), made_from.data(), signature_bytes);
    return static_cast<const Dtype*>(indices->gpu_data());
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>* bottom = blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
    if (!(l.*(&Self::need_permute_))) {
      top->ShareData(*bottom);
      return true;
    }
    const std::int64_t count = top->count();
    if (count == 0) return true;
    const Dtype* index = source_indices(l, count);
    if (!index) return false;
    device().gather_rows(precision_of<Dtype>(), count, 1, count, index, 0, bottom->gpu_data(), 0,
                         top->mutable_gpu_data(), 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>* bottom = blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
    if (!(l.*(&Self::need_permute_))) {
      bottom->ShareDiff(*top);
      return true;
    }
    const std::int64_t count = bottom->count();
    if (count == 0) return true;
    const Dtype* index = source_indices(l, count);
    if (!index) return false;
    Dtype* diff = bottom->mutable_gpu_diff();
    fill(count, 0, diff);
    device().scatter_add_rows(precision_of<Dtype>(), count, 1, count, index, 0, top->gpu_diff(), 0, diff, 0);
    return true;
  }
};

namespace {
const bool permute_layer_registered = register_both<PermuteMethods>("PermuteLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_PERMUTE_LAYER_HPP
