// EltwiseLayer's GPU methods in blobrt's operations, as eltwise_layer.cu computes PROD (the
// element-wise product, its gradient by division or, with stable_prod_grad, by the product
// of the other bottoms), SUM (the coefficients' axpy, the gradient copied or scaled) and MAX
// (MaxForward's running maximum and mask, a tie going to the later bottom, and MaxBackward's
// gradient to the bottom the mask names). MAX's mask is an int blob, max_idx_, where the
// operations have the element type only: it is kept in the element type beside it, from the
// forward to the backward (kept_buffer.hpp); a backward with none runs the CPU code.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_ELTWISE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_ELTWISE_LAYER_HPP

#include <cstddef>
#include <cstdint>

#include <blobrt/caffe/portable/layers/kept_buffer.hpp>
#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct EltwiseMethods : caffe::EltwiseLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::EltwiseLayer<Dtype>;
  // y = a * b, element-wise (y may be a or b).
  static void mul(std::int64_t n, const Dtype* a, const Dtype* b, Dtype* y) {
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kMul, n, 0, 0, a, 0, b, 0, y, 0);
  }

  // MAX's mask in the element type, kept beside the layer's max_idx_.
  static blobrt::SyncedMemory* max_mask(Layer& l, std::int64_t count, bool make) {
    return kept_buffer((l.*(&EltwiseMethods::max_idx_)).data(), static_cast<std::size_t>(count) * sizeof(Dtype), make);
  }
  static void step(blobrt::ElementwiseOp op, std::int64_t n, double alpha, const Dtype* a, const Dtype* b, Dtype* y) {
    device().elementwise(precision_of<Dtype>(), op, n, alpha, 0, a, 0, b, 0, y, 0);
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const auto op = l.*(&EltwiseMethods::op_);
    const std::int64_t count = top.count();
    Dtype* y = top.mutable_gpu_data();
    if (count == 0) return true;
    if (op == caffe::EltwiseParameter_EltwiseOp_MAX) {
      // MaxForward(bottom 0, bottom 1, 0), then MaxForward(top, bottom i, i - 1): the mask's
      // step first, as it compares with the maximum so far.
      blobrt::SyncedMemory* kept = max_mask(l, count, true);
      if (!kept) return false;  // max_idx_ never shaped: the CPU code
      Dtype* mask = static_cast<Dtype*>(kept->mutable_gpu_data());
      using Op = blobrt::ElementwiseOp;
      step(Op::kSet, count, 0, nullptr, nullptr, mask);
      step(Op::kArgmaxStep, count, 1, bottom[0]->gpu_data(), bottom[1]->gpu_data(), mask);
      step(Op::kMaxStep, count, 0, bottom[0]->gpu_data(), bottom[1]->gpu_data(), y);
      for (std::size_t i = 2; i < bottom.size(); ++i) {
        step(Op::kArgmaxStep, count, static_cast<double>(i), y, bottom[i]->gpu_data(), mask);
        step(Op::kMaxStep, count, 0, y, bottom[i]->gpu_data(), y);
      }
      return true;
    }
    if (op != caffe::EltwiseParameter_EltwiseOp_PROD && op != caffe::EltwiseParameter_EltwiseOp_SUM) return false;
    if (op == caffe::EltwiseParameter_EltwiseOp_PROD) {
      mul(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), y);
      for (std::size_t i = 2; i < bottom.size(); ++i) mul(count, y, bottom[i]->gpu_data(), y);
      return true;
    }
    const auto& coeffs = l.*(&EltwiseMethods::coeffs_);
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kSet, count, 0, 0, nullptr, 0, nullptr, 0, y, 0);
    for (std::size_t i = 0; i < bottom.size(); ++i) device().axpy(count, coeffs[i], bottom[i]->gpu_data(), 0, y, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const auto op = l.*(&EltwiseMethods::op_);
    const std::int64_t count = top.count();
    const blobrt::Precision p = precision_of<Dtype>();
    if (op == caffe::EltwiseParameter_EltwiseOp_MAX) {
      if (count == 0) return true;
      blobrt::SyncedMemory* mask = max_mask(l, count, false);
      if (!mask) return false;  // no forward on the device: the CPU code reads max_idx_
      for (std::size_t i = 0; i < bottom.size(); ++i) {
        if (i >= propagate_down.size() || !propagate_down[i]) continue;
        step(blobrt::ElementwiseOp::kMaskSelect, count, static_cast<double>(i), static_cast<const Dtype*>(mask->gpu_data()),
             top.gpu_diff(), bottom[i]->mutable_gpu_diff());
      }
      return true;
    }
    if (op != caffe::EltwiseParameter_EltwiseOp_PROD && op != caffe::EltwiseParameter_EltwiseOp_SUM) return false;
    for (std::size_t i = 0; i < bottom.size(); ++i) {
      if (i >= propagate_down.size() || !propagate_down[i]) continue;
      Dtype* dx = bottom[i]->mutable_gpu_diff();
      if (count == 0) continue;
      if (op == caffe::EltwiseParameter_EltwiseOp_SUM) {
        const Dtype coeff = (l.*(&EltwiseMethods::coeffs_))[i];
        if (coeff == Dtype(1)) {
          device().copy_device(top.gpu_diff(), 0, dx, 0, static_cast<std::size_t>(count) * sizeof(Dtype));
        } else {
          device().elementwise(p, blobrt::ElementwiseOp::kScale, count, coeff, 0, top.gpu_diff(), 0, nullptr, 0, dx, 0);
        }
        continue;
      }
      if (l.*(&EltwiseMethods::stable_prod_grad_)) {
        bool initialized = false;
        for (std::size_t j = 0; j < bottom.size(); ++j) {
          if (j == i) continue;
          if (!initialized) {
            device().copy_device(bottom[j]->gpu_data(), 0, dx, 0, static_cast<std::size_t>(count) * sizeof(Dtype));
            initialized = true;
          } else {
            mul(count, bottom[j]->gpu_data(), dx, dx);
          }
        }
      } else {
        device().elementwise(p, blobrt::ElementwiseOp::kDiv, count, 0, 0, top.gpu_data(), 0, bottom[i]->gpu_data(), 0,
                             dx, 0);
      }
      mul(count, dx, top.gpu_diff(), dx);
    }
    return true;
  }
};

namespace {
const bool eltwise_layer_registered = register_both<EltwiseMethods>("EltwiseLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_ELTWISE_LAYER_HPP
