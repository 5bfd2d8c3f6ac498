// DropoutLayer's GPU methods in blobrt's operations (dropout_layer.cu's kernels). Training:
// the mask drawn as caffe_gpu_rng_uniform draws it (Caffe's generator, one caffe_rng_rand()
// per element) into the layer's rand_vec_ on the host, each element's factor
// (mask > uint_thres_) * scale_ (scale_ as the float the .cu passes; 0 or that scale) uploaded
// once per forward, and the output and the gradient as the element-wise mul by those factors:
// Caffe's in * (mask > t) * scale, bit for bit (x * 1 * s is x * s; x * 0 * s is x * 0 for
// s > 0). The upload replaces the mask's upload of caffe_gpu_rng_uniform (Caffe draws on the
// device with cuRAND: blobrt's operation list has no generator yet). Testing: a copy, as the
// .cu. The factors are kept per layer (per rand_vec_ memory) from the forward to its
// backward; a backward with none (a forward that ran the CPU code) runs the CPU code too.
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
    unsigned int* mask = rand_vec.mutable_cpu_data();
    blobrt::SyncedMemory* kept = kept_buffer(rand_vec.data(), static_cast<std::size_t>(count) * sizeof(Dtype), true);
    if (!kept) return false;  // rand_vec_ never shaped: the CPU code
    blobrt::SyncedMemory& factors = *kept;
    Dtype* factor = static_cast<Dtype*>(factors.mutable_cpu_data());
    const unsigned int threshold = l.*(&Self::uint_thres_);
    const Dtype scale = static_cast<float>(l.*(&Self::scale_));
    caffe::rng_t& rng = *caffe::caffe_rng();  // caffe_rng_rand() without finding the generator per element
    const Dtype choices[2] = {Dtype(0), scale};  // indexed, not branched on: the mask is random
    for (int i = 0; i < count; ++i) {
      mask[i] = rng();
      factor[i] = choices[mask[i] > threshold];
    }
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kMul, count, 0, 0, bottom.gpu_data(), 0,
                         factors.gpu_data(), 0, top.mutable_gpu_data(), 0);
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
    blobrt::SyncedMemory* factors =
        kept_buffer(rand_vec.data(), static_cast<std::size_t>(count) * sizeof(Dtype), false);
    if (!factors) return false;  // no forward of this mask on the device: the CPU code reads rand_vec_
    device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kMul, count, 0, 0, top.gpu_diff(), 0,
                         factors->gpu_data(), 0, bottom.mutable_gpu_diff(), 0);
    return true;
  }
};

namespace {
const bool dropout_layer_registered = register_both<DropoutMethods>("DropoutLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_DROPOUT_LAYER_HPP
