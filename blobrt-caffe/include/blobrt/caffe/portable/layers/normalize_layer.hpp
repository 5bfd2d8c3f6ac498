// SSD's NormalizeLayer (weiliu89/caffe ssd, normalize_layer.cu: conv4_3_norm in SSD300's base
// net) in blobrt's operations. The .cu's own steps are Caffe math functions (powx, asum, gemv
// with the layer's ones, scale, dot, mul, div, add, sub: blobrt's on the device) around two
// kernels, which become:
// - MulBsx, a channels x spatial image times a vector broadcast along its rows (each channel's
//   scale) or along its columns (each position's value): channel_affine's scale, with the
//   vector as the factors of the middle axis;
// - DivBsx, the image divided by a per-position vector broadcast over the channels: the vector
//   spread into the layer's buffer_ (free at each of those points) by channel_affine's bias
//   over zeros, then the element-wise div, so each element is the .cu's quotient (not a
//   product by a reciprocal).
// What the .cu reads on the host it reads here too (across_spatial's norms, a shared scale,
// its gradient). Without these methods the layer ran its CPU code in GPU mode, and SSD's
// conv4_3 output (38 x 38 x 512 per image) crossed to the host and back at every step.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_NORMALIZE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_NORMALIZE_LAYER_HPP

#include <cmath>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct NormalizeMethods : caffe::NormalizeLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::NormalizeLayer<Dtype>;
  using Self = NormalizeMethods;
  using Op = blobrt::ElementwiseOp;

  // MulBsx: y = a times v[row] (rows: each channel) or v[column] (columns: each position).
  static void multiply(const Dtype* a, const Dtype* v, int channels, int spatial, bool by_row, Dtype* y) {
    if (by_row) {
      device().channel_affine(precision_of<Dtype>(), 1, channels, spatial, a, 0, v, 0, nullptr, 0, y, 0);
    } else {
      device().channel_affine(precision_of<Dtype>(), channels, spatial, 1, a, 0, v, 0, nullptr, 0, y, 0);
    }
  }
  // DivBsx by columns: y = a / v[column], v spread into `scratch` (channels x spatial) first.
  static void divide(const Dtype* a, const Dtype* v, int channels, int spatial, Dtype* scratch, Dtype* y) {
    const std::int64_t dim = static_cast<std::int64_t>(channels) * spatial;
    fill(dim, 0, scratch);
    device().channel_affine(precision_of<Dtype>(), channels, spatial, 1, scratch, 0, nullptr, 0, v, 0, scratch, 0);
    device().elementwise(precision_of<Dtype>(), Op::kDiv, dim, 0.0, 0.0, a, 0, scratch, 0, y, 0);
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>* bottom = blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
    const int num = bottom->num();
    if (bottom->count() == 0) return true;
    const int dim = bottom->count() / num, spatial = bottom->height() * bottom->width(), channels = bottom->channels();
    const bool across = l.*(&Self::across_spatial_), shared = l.*(&Self::channel_shared_);
    const Dtype eps = l.*(&Self::eps_);
    caffe::Blob<Dtype>& norm = l.*(&Self::norm_);
    caffe::Blob<Dtype>& buffer = l.*(&Self::buffer_);
    const caffe::Blob<Dtype>& scale = *(l.*(&Self::blobs_))[0];
    const Dtype* in = bottom->gpu_data();
    Dtype* out = top->mutable_gpu_data();
    Dtype* scratch = buffer.mutable_gpu_data();
    Dtype* norms = across ? norm.mutable_cpu_data() : norm.mutable_gpu_data();
    if (!across) caffe::caffe_gpu_set<Dtype>(norm.count(), eps, norms);  // eps against a zero norm
    const Dtype* ones = (l.*(&Self::sum_channel_multiplier_)).gpu_data();
    for (int n = 0; n < num; ++n, in += dim, out += dim) {
      caffe::caffe_gpu_powx<Dtype>(dim, in, Dtype(2), scratch);
      if (across) {
        Dtype sum_of_squares;
        caffe::caffe_gpu_asum<Dtype>(dim, scratch, &sum_of_squares);
        norms[n] = std::pow(sum_of_squares + eps, Dtype(0.5));
        caffe::caffe_gpu_scale<Dtype>(dim, Dtype(1.0 / norms[n]), in, out);
      } else {
        caffe::caffe_gpu_gemv<Dtype>(caffe::CblasTrans, channels, spatial, Dtype(1), scratch, ones, Dtype(1), norms);
        caffe::caffe_gpu_powx<Dtype>(spatial, norms, Dtype(0.5), norms);
        divide(in, norms, channels, spatial, scratch, out);
        norms += spatial;
      }
      if (shared) {
        caffe::caffe_gpu_scal<Dtype>(dim, scale.cpu_data()[0], out);
      } else {
        multiply(out, scale.gpu_data(), channels, spatial, true, out);
      }
    }
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>* bottom = blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
    const int count = top->count(), num = top->num();
    if (count == 0) return true;
    const int dim = count / num, spatial = top->height() * top->width(), channels = top->channels();
    const bool across = l.*(&Self::across_spatial_), shared = l.*(&Self::channel_shared_);
    caffe::Blob<Dtype>& scale = *(l.*(&Self::blobs_))[0];
    const Dtype* top_diff = top->gpu_diff();
    const Dtype* top_data = top->gpu_data();
    const Dtype* bottom_data = bottom->gpu_data();
    Dtype* scratch = (l.*(&Self::buffer_)).mutable_gpu_data();
    Dtype* per_channel = (l.*(&Self::buffer_channel_)).mutable_gpu_data();
    Dtype* per_position = (l.*(&Self::buffer_spatial_)).mutable_gpu_data();
    const Dtype* channel_ones = (l.*(&Self::sum_channel_multiplier_)).gpu_data();
    const Dtype* spatial_ones = (l.*(&Self::sum_spatial_multiplier_)).gpu_data();
    const std::vector<bool>& param_down = l.*(&Self::param_propagate_down_);
    if (!param_down.empty() && param_down[0]) {
      if (shared) {
        Dtype a;
        caffe::caffe_gpu_dot<Dtype>(count, top_data, top_diff, &a);
        scale.mutable_cpu_diff()[0] += a / scale.cpu_data()[0];
      } else {
        Dtype* scale_diff = scale.mutable_gpu_diff();
        for (int n = 0; n < num; ++n) {
          caffe::caffe_gpu_mul<Dtype>(dim, top_data + n * dim, top_diff + n * dim, scratch);
          caffe::caffe_gpu_gemv<Dtype>(caffe::CblasNoTrans, channels, spatial, Dtype(1), scratch, spatial_ones,
                                       Dtype(0), per_channel);
          caffe::caffe_gpu_div<Dtype>(channels, per_channel, scale.gpu_data(), per_channel);
          caffe::caffe_gpu_add<Dtype>(channels, per_channel, scale_diff, scale_diff);
        }
      }
    }
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const Dtype shared_scale = shared ? scale.cpu_data()[0] : Dtype(0);
    const Dtype* norms = across ? (l.*(&Self::norm_)).cpu_data() : (l.*(&Self::norm_)).gpu_data();
    Dtype* bottom_diff = bottom->mutable_gpu_diff();
    for (int n = 0; n < num; ++n, bottom_data += dim, top_diff += dim, bottom_diff += dim) {
      if (across) {
        Dtype a;
        caffe::caffe_gpu_dot<Dtype>(dim, bottom_data, top_diff, &a);
        caffe::caffe_gpu_scale<Dtype>(dim, a / norms[n] / norms[n], bottom_data, bottom_diff);
        caffe::caffe_gpu_sub<Dtype>(dim, top_diff, bottom_diff, bottom_diff);
        caffe::caffe_gpu_scale<Dtype>(dim, Dtype(1.0 / norms[n]), bottom_diff, bottom_diff);
      } else {
        caffe::caffe_gpu_mul<Dtype>(dim, bottom_data, top_diff, scratch);
        caffe::caffe_gpu_gemv<Dtype>(caffe::CblasTrans, channels, spatial, Dtype(1), scratch, channel_ones, Dtype(0),
                                     per_position);
        multiply(bottom_data, per_position, channels, spatial, false, bottom_diff);
        caffe::caffe_gpu_powx<Dtype>(spatial, norms, Dtype(2), per_position);
        divide(bottom_diff, per_position, channels, spatial, scratch, bottom_diff);
        caffe::caffe_gpu_sub<Dtype>(dim, top_diff, bottom_diff, bottom_diff);
        divide(bottom_diff, norms, channels, spatial, scratch, bottom_diff);
        norms += spatial;
      }
      if (shared) {  // the scale's share of the gradient
        caffe::caffe_gpu_scal<Dtype>(dim, shared_scale, bottom_diff);
      } else {
        multiply(bottom_diff, scale.gpu_data(), channels, spatial, true, bottom_diff);
      }
    }
    return true;
  }
};

namespace {
const bool normalize_layer_registered = register_both<NormalizeMethods>("NormalizeLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_NORMALIZE_LAYER_HPP
