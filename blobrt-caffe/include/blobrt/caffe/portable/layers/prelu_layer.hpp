// PReLULayer's GPU methods in blobrt's operations, where prelu_layer.cu has kernels of its own:
//   forward   x * slope[c] by channel_affine, then positive_select: x where x > 0, the kernel's
//             x > 0 ? x : x * slope[c];
//   backward  the slopes' gradient as the .cu: dy * x * (x <= 0) per element (mul, then
//             clip_backward over [-inf, 0]), summed over the batch (gemv with ones; the .cu
//             sums the rows in a loop), then over each channel (gemv with the layer's
//             multiplier_, or dot where the slope is shared) into the slope's diff; the
//             bottom's dy * slope[c] by channel_affine, then positive_select: dy where x > 0.
// In place, the bottom is kept in the layer's bottom_memory_ as the .cu keeps it.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_PRELU_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_PRELU_LAYER_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt/caffe/portable/scratch.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct PReLUMethods : caffe::PReLULayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::PReLULayer<Dtype>;
  using Self = PReLUMethods;
  static constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

  struct Shape {
    std::int64_t count, num, channels, dim;
  };
  static Shape shape(const caffe::Blob<Dtype>& bottom) {
    return {bottom.count(), bottom.shape(0), bottom.shape(1), bottom.count(2)};
  }
  // y = v * slope[c] over the bottom's layout (one slope for all where it is shared).
  static void times_slope(const Layer& l, const Shape& s, const Dtype* v, Dtype* y) {
    const Dtype* slope = (l.*(&Self::blobs_))[0]->gpu_data();
    if (l.*(&Self::channel_shared_)) {
      device().channel_affine(precision_of<Dtype>(), 1, 1, s.count, v, 0, slope, 0, nullptr, 0, y, 0);
    } else {
      device().channel_affine(precision_of<Dtype>(), s.num, s.channels, s.dim, v, 0, slope, 0, nullptr, 0, y, 0);
    }
  }
  // y = y * (x <= 0), in place.
  static void keep_non_positive(std::int64_t count, const Dtype* x, Dtype* y) {
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kClipBackward, count, kMinusInfinity, 0.0, x,
                         0, y, 0, y, 0);
  }
  // y = x > 0 ? v : y, in place.
  static void where_positive(std::int64_t count, const Dtype* x, const Dtype* v, Dtype* y) {
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kPositiveSelect, count, 0.0, 0.0, x, 0, v, 0,
                         y, 0);
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const Shape s = shape(bottom);
    if (s.count == 0) return true;
    const Dtype* x = bottom.gpu_data();
    if (&top == &bottom) {
      Dtype* kept = (l.*(&Self::bottom_memory_)).mutable_gpu_data();
      device().copy_device(x, 0, kept, 0, static_cast<std::size_t>(s.count) * sizeof(Dtype));
      x = kept;
    }
    Dtype* y = top.mutable_gpu_data();
    times_slope(l, s, x, y);
    where_positive(s.count, x, x, y);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const Shape s = shape(bottom);
    const blobrt::Precision p = precision_of<Dtype>();
    const std::vector<bool>& param_propagate = l.*(&Self::param_propagate_down_);
    const bool slope_gradient = !param_propagate.empty() && param_propagate[0];
    const bool bottom_gradient = !propagate_down.empty() && propagate_down[0];
    if (s.count == 0 || (!slope_gradient && !bottom_gradient)) return true;
    const Dtype* x = (&top == &bottom ? l.*(&Self::bottom_memory_) : bottom).gpu_data();
    const Dtype* dy = top.gpu_diff();
    if (slope_gradient) {
      caffe::Blob<Dtype>& slope = *(l.*(&Self::blobs_))[0];
      caffe::Blob<Dtype>& buff = l.*(&Self::backward_buff_);
      const Dtype* ones = (l.*(&Self::multiplier_)).gpu_data();
      const std::int64_t cdim = s.channels * s.dim;
      Dtype* product = scratch<Dtype>(0, static_cast<int>(s.count));
      device().elementwise(p, blobrt::ElementwiseOp::kMul, s.count, 0.0, 0.0, dy, 0, x, 0, product, 0);
      keep_non_positive(s.count, x, product);
      Dtype* batch_ones = scratch<Dtype>(1, static_cast<int>(s.num));
      device().elementwise(p, blobrt::ElementwiseOp::kSet, s.num, 1.0, 0.0, nullptr, 0, nullptr, 0, batch_ones, 0);
      Dtype* sums = buff.mutable_gpu_diff();
      device().gemv(p, blobrt::Transpose::kYes, s.num, cdim, 1.0, product, 0, batch_ones, 0, 0.0, sums, 0);
      if (l.*(&Self::channel_shared_)) {
        Dtype total = 0;
        device().dot(cdim, sums, 0, ones, 0, &total);
        device().elementwise(p, blobrt::ElementwiseOp::kAddScalar, slope.count(), static_cast<double>(total), 0.0,
                             nullptr, 0, nullptr, 0, slope.mutable_gpu_diff(), 0);
      } else {
        device().gemv(p, blobrt::Transpose::kNo, s.channels, s.dim, 1.0, sums, 0, ones, 0, 1.0,
                      slope.mutable_gpu_diff(), 0);
      }
    }
    if (bottom_gradient) {
      Dtype* dx = bottom.mutable_gpu_diff();
      // In place dx is dy, which the selection still reads: the product goes to a scratch.
      Dtype* product = dx == dy ? scratch<Dtype>(0, static_cast<int>(s.count)) : dx;
      times_slope(l, s, dy, product);
      where_positive(s.count, x, dy, product);
      if (product != dx) device().copy_device(product, 0, dx, 0, static_cast<std::size_t>(s.count) * sizeof(Dtype));
    }
    return true;
  }
};

namespace {
const bool prelu_layer_registered = register_both<PReLUMethods>("PReLULayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_PRELU_LAYER_HPP
