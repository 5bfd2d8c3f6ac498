// DropoutLayer's GPU methods in blobrt's operations (dropout_layer.cu's kernels). Training:
// the 0/1 mask drawn on the device by bernoulli_mask (the Philox4x32-10 stream of the
// thread's Caffe context: Caffe::take_device_words, keyed by Caffe's seed, where Caffe's .cu
// draws rand_vec_ with cuRAND and tests mask > uint_thres_), so nothing crosses between host
// and device (where the backend has the operation: a plugin without it gets the core's host
// path, which draws on the host and copies the mask up); then the kernels' expressions in their order by element-wise operations: the
// output (in * keep) * scale, the gradient (dy * scale) * keep, scale_ as the float the .cu
// passes: Caffe's values bit for bit for a given mask, infinities and NaN included. The mask
// is another draw than cuRAND's (docs/differences-from-caffe.md), and rand_vec_ itself is
// left as it was: the 0/1 mask is kept per layer (per rand_vec_ memory) from the forward to
// its backward; a backward with none runs the CPU code. Testing: a copy, as the .cu. A
// forward in CPU mode between a forward and a backward in GPU mode (Caffe never mixes them
// in one step) would leave the GPU backward the older mask.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_DROPOUT_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_DROPOUT_LAYER_HPP

#include <cstddef>

#include <blobrt/caffe/portable/layers/kept_buffer.hpp>
#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct DropoutMethods : caffe::DropoutLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::DropoutLayer<Dtype>;
  using Self = DropoutMethods;

  static bool training(const Layer& l) { return l.*(&Self::phase_) == caffe::TRAIN; }
  // scale_ as the .cu's kernels take it: a float.
  static double scale(const Layer& l) { return static_cast<float>(l.*(&Self::scale_)); }
  // The .cu's caffe_copy (nothing in place).
  static void copy_on_device(int count, const Dtype* from, Dtype* to) {
    if (count > 0 && from != to) device().copy_device(from, 0, to, 0, static_cast<std::size_t>(count) * sizeof(Dtype));
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    const int count = bottom.count();
    if (!training(l)) {
      copy_on_device(count, bottom.gpu_data(), top.mutable_gpu_data());
      return true;
    }
    if (count == 0) return true;
    caffe::Blob<unsigned int>& rand_vec = l.*(&Self::rand_vec_);
    blobrt::SyncedMemory* kept = kept_buffer(rand_vec.data(), static_cast<std::size_t>(count) * sizeof(Dtype), true);
    if (!kept) return false;  // rand_vec_ never shaped: the CPU code
    const caffe::Caffe::DeviceWords words = caffe::Caffe::take_device_words(count);
    device().bernoulli_mask(precision_of<Dtype>(), count, words.seed, words.counter, l.*(&Self::uint_thres_),
                            kept->mutable_gpu_data(), 0);
    Dtype* y = top.mutable_gpu_data();
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kMul, count, 0, 0, bottom.gpu_data(), 0,
                         kept->gpu_data(), 0, y, 0);
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kScale, count, scale(l), 0, y, 0, nullptr, 0,
                         y, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    const int count = bottom.count();
    if (!training(l)) {
      copy_on_device(count, top.gpu_diff(), bottom.mutable_gpu_diff());
      return true;
    }
    if (count == 0) return true;
    caffe::Blob<unsigned int>& rand_vec = l.*(&Self::rand_vec_);
    blobrt::SyncedMemory* keep = kept_buffer(rand_vec.data(), static_cast<std::size_t>(count) * sizeof(Dtype), false);
    if (!keep) return false;  // no forward of this mask on the device: the CPU code reads rand_vec_
    Dtype* dx = bottom.mutable_gpu_diff();
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kScale, count, scale(l), 0, top.gpu_diff(), 0,
                         nullptr, 0, dx, 0);
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kMul, count, 0, 0, dx, 0, keep->gpu_data(), 0,
                         dx, 0);
    return true;
  }
};

namespace {
const bool dropout_layer_registered = register_both<DropoutMethods>("DropoutLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_DROPOUT_LAYER_HPP
