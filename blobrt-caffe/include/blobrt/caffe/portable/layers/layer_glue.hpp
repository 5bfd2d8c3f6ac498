// What blobrt's own GPU methods for Caffe's layers share (the headers beside this one, one per
// layer .cu with kernels): the type-erased arguments of PortableLayerMethods back as Caffe's
// types, and the registration of a class's methods for float and double. Included by the
// portable build's generated source for the layer's .cu (caffe-portable-gpu.cmake), after the
// layer's own header, where the Caffe tree's classes are known.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_LAYER_GLUE_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_LAYER_GLUE_HPP

#include <cstdint>
#include <vector>

#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/device.hpp>
#include <blobrt/runtime.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
const std::vector<caffe::Blob<Dtype>*>& blobs(const void* erased) {
  return *static_cast<const std::vector<caffe::Blob<Dtype>*>*>(erased);
}

inline blobrt::Device& device() { return *blobrt::current_device(); }

// y[0, n) = value on the device (caffe_gpu_set).
template <typename Dtype>
void fill(std::int64_t n, double value, Dtype* y) {
  device().elementwise(precision_of<Dtype>(), blobrt::ElementwiseOp::kSet, n, value, 0, nullptr, 0, nullptr, 0, y, 0);
}

// The layer class L (a caffe::Layer<Dtype>) behind PortableLayerMethods' erased pointer.
template <class L, typename Dtype>
L& layer_as(void* layer) {
  return *static_cast<L*>(static_cast<caffe::Layer<Dtype>*>(layer));
}

// Registers Forward<Dtype> and Backward<Dtype> (templates over Dtype taking the erased
// arguments) for `layer_class` in float and double; true, for a namespace-scope constant.
template <template <typename> class Methods>
bool register_both(const char* layer_class) {
  register_portable_gpu_layer(layer_class, blobrt::Precision::kFloat32,
                              {&Methods<float>::forward, &Methods<float>::backward});
  register_portable_gpu_layer(layer_class, blobrt::Precision::kFloat64,
                              {&Methods<double>::forward, &Methods<double>::backward});
  return true;
}

// The same for a layer whose .cu has a forward only (ThresholdLayer).
template <template <typename> class Methods>
bool register_forward(const char* layer_class) {
  register_portable_gpu_layer(layer_class, blobrt::Precision::kFloat32, {&Methods<float>::forward, nullptr});
  register_portable_gpu_layer(layer_class, blobrt::Precision::kFloat64, {&Methods<double>::forward, nullptr});
  return true;
}

// register_both where Methods<float>::kSupported (the tree's layer has what the methods
// read), else nothing (the layer's CPU code runs); the methods' bodies are then never
// instantiated, so they may name what such a layer lacks.
template <template <typename> class Methods>
bool register_if_supported(const char* layer_class) {
  if constexpr (Methods<float>::kSupported) {
    return register_both<Methods>(layer_class);
  } else {
    return false;
  }
}

// A neuron layer computed by one element-wise code each way: forward y = f(bottom), backward
// bottom_diff = g(a, top_diff) with a the bottom's data (ReLU) or the top's (Sigmoid, TanH),
// as the layer's .cu reads them, alpha and beta the code's parameters (a slope, Clip's range).
// In place (top = bottom) as Caffe's own kernels allow.
template <typename Dtype>
bool neuron_forward(blobrt::ElementwiseOp op, double alpha, const void* bottom_erased, const void* top_erased,
                    double beta = 0) {
  const caffe::Blob<Dtype>* bottom = blobs<Dtype>(bottom_erased)[0];
  caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
  const int count = bottom->count();
  if (count == 0) return true;
  device().elementwise(precision_of<Dtype>(), op, count, alpha, beta, bottom->gpu_data(), 0, nullptr, 0,
                       top->mutable_gpu_data(), 0);
  return true;
}
template <typename Dtype>
bool neuron_backward(blobrt::ElementwiseOp op, double alpha, bool from_top, const void* top_erased,
                     const std::vector<bool>& propagate_down, const void* bottom_erased, double beta = 0) {
  if (propagate_down.empty() || !propagate_down[0]) return true;
  caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
  caffe::Blob<Dtype>* bottom = blobs<Dtype>(bottom_erased)[0];
  const int count = bottom->count();
  if (count == 0) return true;
  const Dtype* data = from_top ? top->gpu_data() : bottom->gpu_data();
  device().elementwise(precision_of<Dtype>(), op, count, alpha, beta, data, 0, top->gpu_diff(), 0,
                       bottom->mutable_gpu_diff(), 0);
  return true;
}

// A neuron layer without parameters whose backward reads the top's data (Sigmoid, TanH) or,
// FromTop false, the bottom's (BNLL): ParameterlessNeuron<forward code, backward code>::Methods,
// for register_both.
template <blobrt::ElementwiseOp Forward, blobrt::ElementwiseOp Backward, bool FromTop = true>
struct ParameterlessNeuron {
  template <typename Dtype>
  struct Methods {
    static bool forward(void*, const void* bottom, const void* top) {
      return neuron_forward<Dtype>(Forward, 0, bottom, top);
    }
    static bool backward(void*, const void* top, const std::vector<bool>& propagate_down, const void* bottom) {
      return neuron_backward<Dtype>(Backward, 0, FromTop, top, propagate_down, bottom);
    }
  };
};

// Caffe's Concat and Slice kernels, both directions: the whole blob and its parts along
// `axis` seen as `rows` rows (the leading axes' count); part i's row is its extent along the
// axis times `inner` (the trailing axes' count) elements, at the earlier parts' columns in
// the whole's row. Copies each part's data (or diff) into its place in the whole, or out of
// it; `wanted` (may be null: all) says which parts take part.
template <typename Dtype>
void copy_parts(std::int64_t rows, std::int64_t inner, int axis, const std::vector<caffe::Blob<Dtype>*>& parts,
                const std::vector<bool>* wanted, bool diff, bool into_whole, caffe::Blob<Dtype>& whole) {
  std::int64_t whole_columns = 0;
  for (const caffe::Blob<Dtype>* part : parts) whole_columns += part->shape(axis) * inner;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::int64_t columns = parts[i]->shape(axis) * inner;
    if (!wanted || (i < wanted->size() && (*wanted)[i])) {
      caffe::Blob<Dtype>& part = *parts[i];
      if (into_whole) {
        device().copy_rows(precision_of<Dtype>(), rows, columns, diff ? part.gpu_diff() : part.gpu_data(), 0, columns,
                           diff ? whole.mutable_gpu_diff() : whole.mutable_gpu_data(), offset, whole_columns);
      } else {
        device().copy_rows(precision_of<Dtype>(), rows, columns, diff ? whole.gpu_diff() : whole.gpu_data(), offset,
                           whole_columns, diff ? part.mutable_gpu_diff() : part.mutable_gpu_data(), 0, columns);
      }
    }
    offset += columns;
  }
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_LAYER_GLUE_HPP
