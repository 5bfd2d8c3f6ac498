// AccuracyLayer's GPU forward in blobrt's operations, as accuracy_layer.cu computes it: each
// position's hit (top_k_hits, into bottom[0]'s diff, Caffe's scratch, cleared afterwards as
// Caffe clears it), their sum by asum (the one number read back), divided by the positions
// whose label is not ignored (counted on the host from the labels where the layer has an
// ignore label: one copy of the labels; Caffe sums a count buffer on the device). A second top
// (per-class accuracy), or scores of no element, runs the CPU code. The layer has no backward but Caffe's refusal to
// propagate to the labels, which its CPU code gives.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_ACCURACY_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_ACCURACY_LAYER_HPP

#include <cmath>
#include <cstdint>
#include <limits>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt_kernels/softmax_loss.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct AccuracyMethods : caffe::AccuracyLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::AccuracyLayer<Dtype>;
  using Self = AccuracyMethods;

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const auto& top = blobs<Dtype>(top_erased);
    if (top.size() > 1) return false;
    const Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const blobrt::Precision p = precision_of<Dtype>();
    const std::int64_t outer = l.*(&Self::outer_num_), inner = l.*(&Self::inner_num_),
                       channels = bottom[0]->shape(l.*(&Self::label_axis_)), positions = outer * inner;
    // Caffe sets ignore_label_ only where the layer has one.
    const bool has_ignore = l.*(&Self::has_ignore_label_);
    const double ignore = has_ignore ? double(l.*(&Self::ignore_label_)) : std::numeric_limits<double>::quiet_NaN();
    if (bottom[0]->count() == 0) return false;  // no scratch to count in (Caffe allows 0 classes with top_k 0)
    Dtype* hits = bottom[0]->mutable_gpu_diff();
    device().top_k_hits(p, outer, channels, inner, bottom[0]->gpu_data(), 0, bottom[1]->gpu_data(), 0, ignore,
                        l.*(&Self::top_k_), hits, 0);
    Dtype accuracy = 0;
    device().asum(positions, hits, 0, &accuracy);
    std::int64_t valid = positions;
    if (has_ignore) {
      const Dtype* labels = bottom[1]->cpu_data();
      for (std::int64_t q = 0; q < positions; ++q) {
        valid -= blobrt_kernels::label_class(labels[q], ignore, channels) == blobrt_kernels::kLabelIgnored;
      }
    }
    top[0]->mutable_cpu_data()[0] = valid > 0 ? accuracy / Dtype(valid) : Dtype(0);
    fill(bottom[0]->count(), 0, hits);
    return true;
  }
};

namespace {
const bool accuracy_layer_registered = register_forward<AccuracyMethods>("AccuracyLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_ACCURACY_LAYER_HPP
