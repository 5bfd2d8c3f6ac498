// EmbedLayer's GPU methods in blobrt's operations, as embed_layer.cu computes them: forward
// the weight's rows the bottom's indices name (gather_rows) and the bias term by Caffe's gemm
// with bias_multiplier_; backward the weight's gradient by scatter_add_rows (the rows added in
// the bottom's order, Caffe's CPU order, where the .cu adds atomically in any order) and the
// bias term's by Caffe's gemv. An index that names no row gives a row of NaN (the .cu reads
// outside the weight there). Backward to the bottom (indices) runs the CPU code, whose CHECK
// says it cannot be done.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_EMBED_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_EMBED_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct EmbedMethods : caffe::EmbedLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::EmbedLayer<Dtype>;
  using Self = EmbedMethods;

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const blobrt::Precision p = precision_of<Dtype>();
    const std::int64_t m = l.*(&Self::M_), n = l.*(&Self::N_);
    const auto& params = l.*(&Self::blobs_);
    Dtype* top = blobs<Dtype>(top_erased)[0]->mutable_gpu_data();
    device().gather_rows(p, m, n, l.*(&Self::K_), blobs<Dtype>(bottom_erased)[0]->gpu_data(), 0,
                         params[0]->gpu_data(), 0, top, 0);
    if (l.*(&Self::bias_term_)) {
      device().gemm(p, blobrt::Transpose::kNo, blobrt::Transpose::kNo, m, n, 1, 1.0,
                    (l.*(&Self::bias_multiplier_)).gpu_data(), 0, params[1]->gpu_data(), 0, 1.0, top, 0);
    }
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    if (!propagate_down.empty() && propagate_down[0]) return false;  // Caffe's CHECK, in its CPU code
    Layer& l = layer_as<Layer, Dtype>(layer);
    const blobrt::Precision p = precision_of<Dtype>();
    const std::int64_t m = l.*(&Self::M_), n = l.*(&Self::N_);
    const auto& params = l.*(&Self::blobs_);
    const std::vector<bool>& param_down = l.*(&Self::param_propagate_down_);
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    if (param_down[0]) {
      device().scatter_add_rows(p, m, n, l.*(&Self::K_), blobs<Dtype>(bottom_erased)[0]->gpu_data(), 0,
                                top.gpu_diff(), 0, params[0]->mutable_gpu_diff(), 0);
    }
    if (l.*(&Self::bias_term_) && param_down[1]) {
      device().gemv(p, blobrt::Transpose::kYes, m, n, 1.0, top.gpu_diff(), 0,
                    (l.*(&Self::bias_multiplier_)).gpu_data(), 0, 1.0, params[1]->mutable_gpu_diff(), 0);
    }
    return true;
  }
};

namespace {
const bool embed_layer_registered = register_both<EmbedMethods>("EmbedLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_EMBED_LAYER_HPP
