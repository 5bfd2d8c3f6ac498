// ContrastiveLossLayer's GPU methods in blobrt's operations, as contrastive_loss_layer.cu
// computes them. Forward: a - b into diff_ (sub), squared into diff_sq_ (powx 2), each pair's
// squared distance into dist_sq_ (gemv by the layer's summer_vec_ of ones); then the loss on
// the host from the pair labels and dist_sq_, as the .cu itself does (its loop reads both).
// Backward: each row of bottom i's gradient is diff_'s row times one factor per pair (alpha
// for a similar pair; for a dissimilar one inside the margin -alpha (m - d) / (d + 1e-4), or
// -alpha with legacy_version; else 0), the factors made on the host from what forward read
// there (the pair labels, dist_sq_) and uploaded (one element per pair and bottom: the only
// traffic this layer adds to the .cu's), the rows scaled by channel_affine.
//
// legacy_version differs from the .cu, whose CLLBackward writes -alpha without diff_'s
// factor: here, as Caffe's CPU code (and the loss's gradient), -alpha times diff_
// (docs/differences-from-caffe.md).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include <blobrt/caffe/portable/layers/kept_buffer.hpp>
#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ContrastiveLossMethods : caffe::ContrastiveLossLayer<Dtype> {  // never made: it names protected members
  using Layer = caffe::ContrastiveLossLayer<Dtype>;
  using Self = ContrastiveLossMethods;
  using Op = blobrt::ElementwiseOp;

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const std::int64_t count = bottom[0]->count(), num = bottom[0]->num(), channels = bottom[0]->channels();
    const blobrt::Precision p = precision_of<Dtype>();
    caffe::Blob<Dtype>& diff = l.*(&Self::diff_);
    caffe::Blob<Dtype>& diff_sq = l.*(&Self::diff_sq_);
    caffe::Blob<Dtype>& dist_sq = l.*(&Self::dist_sq_);
    if (count > 0) {
      device().elementwise(p, Op::kSub, count, 0.0, 0.0, bottom[0]->gpu_data(), 0, bottom[1]->gpu_data(), 0,
                           diff.mutable_gpu_data(), 0);
      device().elementwise(p, Op::kPowx, count, 2.0, 0.0, diff.gpu_data(), 0, nullptr, 0, diff_sq.mutable_gpu_data(), 0);
      device().gemv(p, blobrt::Transpose::kNo, num, channels, 1.0, diff_sq.gpu_data(), 0,
                    (l.*(&Self::summer_vec_)).gpu_data(), 0, 0.0, dist_sq.mutable_gpu_data(), 0);
    }
    const auto& param = l.layer_param().contrastive_loss_param();
    const Dtype margin = param.margin();
    const bool legacy_version = param.legacy_version();
    const Dtype* similar = bottom[2]->cpu_data();
    const Dtype* d2 = num > 0 ? dist_sq.cpu_data() : nullptr;
    Dtype loss(0.0);
    for (std::int64_t i = 0; i < num; ++i) {  // Forward_gpu's loop
      if (static_cast<int>(similar[i])) {
        loss += d2[i];
      } else if (legacy_version) {
        loss += std::max(margin - d2[i], Dtype(0.0));
      } else {
        const Dtype dist = std::max(margin - static_cast<Dtype>(std::sqrt(d2[i])), Dtype(0.0));
        loss += dist * dist;
      }
    }
    top[0]->mutable_cpu_data()[0] = loss / static_cast<Dtype>(num) / Dtype(2);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const std::int64_t num = bottom[0]->num(), channels = bottom[0]->channels();
    const bool wanted[2] = {!propagate_down.empty() && propagate_down[0],
                            propagate_down.size() > 1 && propagate_down[1]};
    if (!(wanted[0] || wanted[1]) || num == 0) return true;
    const caffe::Blob<Dtype>& dist_sq = l.*(&Self::dist_sq_);
    // Both bottoms' factors (the sign differs) in one buffer, uploaded once: kept beside
    // dist_sq_'s memory.
    blobrt::SyncedMemory* kept = kept_buffer(dist_sq.data(), 2 * static_cast<std::size_t>(num) * sizeof(Dtype), true);
    if (!kept) return false;  // dist_sq_ never shaped: the CPU code
    const auto& param = l.layer_param().contrastive_loss_param();
    const Dtype margin = param.margin();
    const bool legacy_version = param.legacy_version();
    const Dtype* similar = bottom[2]->cpu_data();
    const Dtype* d2 = dist_sq.cpu_data();
    Dtype* factor = static_cast<Dtype*>(kept->mutable_cpu_data());
    for (int i = 0; i < 2; ++i) {
      const Dtype sign = i == 0 ? 1 : -1;
      const Dtype alpha = sign * top[0]->cpu_diff()[0] / static_cast<Dtype>(num);
      for (std::int64_t n = 0; n < num; ++n) {  // Backward_cpu's, per pair
        Dtype& f = factor[i * num + n];
        if (static_cast<int>(similar[n])) {
          f = alpha;
          continue;
        }
        Dtype mdist(0.0), beta(0.0);
        if (legacy_version) {
          mdist = margin - d2[n];
          beta = -alpha;
        } else {
          const Dtype dist = static_cast<Dtype>(std::sqrt(d2[n]));
          mdist = margin - dist;
          beta = -alpha * mdist / (dist + Dtype(1e-4));
        }
        f = mdist > Dtype(0.0) ? beta : Dtype(0);
      }
    }
    const Dtype* factors = static_cast<const Dtype*>(kept->gpu_data());
    for (int i = 0; i < 2; ++i) {
      if (!wanted[i]) continue;
      device().channel_affine(precision_of<Dtype>(), 1, num, channels, (l.*(&Self::diff_)).gpu_data(), 0, factors,
                              i * num, nullptr, 0, bottom[i]->mutable_gpu_diff(), 0);
    }
    return true;
  }
};

namespace {
const bool contrastive_loss_layer_registered = register_both<ContrastiveLossMethods>("ContrastiveLossLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP
