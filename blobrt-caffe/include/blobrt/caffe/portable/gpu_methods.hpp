// A Caffe layer's GPU methods in the portable build (BLOBRT_CAFFE_PORTABLE;
// docs/caffe-on-blobrt.md, "One build for every node"). For each layer whose .cu file
// launches CUDA kernels, the build defines its Forward_gpu/Backward_gpu with
// BLOBRT_CAFFE_GPU_METHODS (the generated sources of caffe-portable-gpu.cmake): at run
// time they call, for the calling thread's device, the implementation a backend registered
// (register_gpu_layer, by the kind of memory the device has: its DLPack device type; the
// Caffe-layers plugin's kernels), else blobrt's own in its device operations where
// blobrt-caffe has one (register_portable_gpu_layer: blobrt/caffe/portable/layers/), else
// the layer's own CPU code, on the data SyncedMemory brings to the host. The fallback is
// said once per layer class, method and device at BLOBRT_LOG=info, and gpu_method_report()
// lists how each ran. Layers whose .cu has no kernel (only caffe_gpu_* calls: Convolution,
// InnerProduct, ...) are Caffe's own code, compiled as C++, and run on the device through
// blobrt's operations.
#ifndef BLOBRT_CAFFE_PORTABLE_GPU_METHODS_HPP
#define BLOBRT_CAFFE_PORTABLE_GPU_METHODS_HPP

#include <string>
#include <type_traits>
#include <vector>

#include <blobrt/device.hpp>
#include <blobrt/runtime.hpp>

namespace blobrt_caffe_portable {

// A backend's implementation of one layer class's GPU methods for one precision. The
// layer is the caffe::Layer<Dtype>* (the registered class), the blob vectors Caffe's
// std::vector<caffe::Blob<Dtype>*>: type-erased, since only code compiled against the
// Caffe tree's headers knows them. Either may be null (that method is the CPU code's).
struct GpuLayerMethods {
  void (*forward)(void* layer, const void* bottom, const void* top) = nullptr;
  void (*backward)(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) = nullptr;
};

// Registers `methods` for `layer_class` (Caffe's C++ class name, "ReLULayer") in
// `precision`, on every device whose memory is `memory` (CUDA memory: the Caffe-layers
// plugin's kernels). A later registration for the same key replaces the earlier one.
void register_gpu_layer(const std::string& layer_class, blobrt::Precision precision, blobrt::NativeDeviceType memory,
                        GpuLayerMethods methods);
// blobrt's own implementation of one layer class's GPU methods for one precision, in
// blobrt's device operations (blobrt/caffe/portable/layers/: every backend runs them, on its
// own kernels or the host kernels). Used on a device for which no backend registered the
// class (register_gpu_layer: Caffe's own kernels come first), and only in a precision the
// device has. A method may decline a layer it does not cover (PoolingLayer's mask top) by
// returning false: the layer's CPU code then runs.
struct PortableLayerMethods {
  bool (*forward)(void* layer, const void* bottom, const void* top) = nullptr;
  bool (*backward)(void* layer, const void* top, const std::vector<bool>& propagate_down, const void* bottom) = nullptr;
};
void register_portable_gpu_layer(const std::string& layer_class, blobrt::Precision precision,
                                 PortableLayerMethods methods);

// Both registrations for `device` in one lookup (what a layer call asks): the backend's, and
// blobrt's own; members null where nothing was registered.
struct LayerMethods {
  GpuLayerMethods native;
  PortableLayerMethods portable;
};
LayerMethods find_layer_methods(const std::string& layer_class, blobrt::Precision precision,
                                const blobrt::Device& device);

// What was registered for `device` (both members null where nothing was).
GpuLayerMethods find_gpu_layer(const std::string& layer_class, blobrt::Precision precision,
                               const blobrt::Device& device);
// Records that `method` of `layer_class` ran its CPU code on `device` (logged at info the
// first time for each class, method and device).
void note_cpu_fallback(const char* layer_class, const char* method, const blobrt::Device& device);
// Records that a registered implementation ran (logged at info the first time).
void note_on_device(const char* layer_class, const char* method, const blobrt::Device& device);
// One line per class, method and device that ran so far: "ReLULayer Forward_gpu on
// simgpu:0: CPU code" or "...: device".
std::vector<std::string> gpu_method_report();

// The layer classes whose GPU methods dispatch (each BLOBRT_CAFFE_GPU_FORWARD/BACKWARD notes
// its class when Caffe's library loads), sorted: what `blobrt info --caffe` lists per device.
bool note_dispatched_layer(const char* layer_class);
std::vector<std::string> dispatched_layers();

// Caffe's GPU code offsets the handles gpu_data() returns (`bottom_data + n * dim_`): on a
// device whose handles are not addresses (an OpenCL cl_mem) that takes blobrt's
// addressable handles (blobrt::request_addressable_handles), which this asks for. False,
// and a warning in blobrt's log, where such a device was opened before.
bool request_addressable_handles();

template <typename Dtype>
constexpr blobrt::Precision precision_of() {
  return std::is_same<Dtype, double>::value ? blobrt::Precision::kFloat64 : blobrt::Precision::kFloat32;
}

// Runs the implementation registered for the calling thread's device (a backend's, else
// blobrt's own) of one method; false where there is none or it declined (the caller runs
// the CPU code). Noted either way (note_on_device, note_cpu_fallback).
template <typename Dtype, typename... Args>
bool run_on_device(const char* layer_class, const char* method, void (*GpuLayerMethods::*native_member)(void*, Args...),
                   bool (*PortableLayerMethods::*portable_member)(void*, Args...), void* layer, Args... args) {
  const blobrt::Device& device = *blobrt::current_device();
  const LayerMethods found = find_layer_methods(layer_class, precision_of<Dtype>(), device);
  const auto native = found.native.*native_member;
  if (native) {
    note_on_device(layer_class, method, device);
    native(layer, args...);
    return true;
  }
  // blobrt's own methods need double on the device for Dtype double; else the CPU code.
  const bool precision_ok = precision_of<Dtype>() != blobrt::Precision::kFloat64 || device.description().supports_fp64;
  const auto portable = found.portable.*portable_member;
  if (portable && precision_ok && portable(layer, args...)) {
    note_on_device(layer_class, method, device);
    return true;
  }
  note_cpu_fallback(layer_class, method, device);
  return false;
}

template <typename Dtype, typename Blobs>
bool forward_on_device(const char* layer_class, void* layer, const Blobs& bottom, const Blobs& top) {
  return run_on_device<Dtype, const void*, const void*>(layer_class, "Forward_gpu", &GpuLayerMethods::forward,
                                                        &PortableLayerMethods::forward, layer, &bottom, &top);
}

template <typename Dtype, typename Blobs>
bool backward_on_device(const char* layer_class, void* layer, const Blobs& top, const std::vector<bool>& propagate_down,
                        const Blobs& bottom) {
  return run_on_device<Dtype, const void*, const std::vector<bool>&, const void*>(
      layer_class, "Backward_gpu", &GpuLayerMethods::backward, &PortableLayerMethods::backward, layer, &top,
      propagate_down, &bottom);
}

}  // namespace blobrt_caffe_portable

// Inside namespace caffe, where the layer's header declared the class: its GPU methods as
// above, and their instantiation for float and double (as the .cu's INSTANTIATE_* did).
// The layer pointer handed to a registered implementation is the Layer<Dtype>* base.
#define BLOBRT_CAFFE_GPU_FORWARD(classname)                                                                       \
  template <typename Dtype>                                                                                       \
  void classname<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,                                     \
                                     const std::vector<Blob<Dtype>*>& top) {                                      \
    if (!::blobrt_caffe_portable::forward_on_device<Dtype>(#classname, static_cast<Layer<Dtype>*>(this), bottom,  \
                                                           top)) {                                                \
      this->Forward_cpu(bottom, top);                                                                             \
    }                                                                                                             \
  }                                                                                                               \
  namespace {                                                                                                     \
  const bool blobrt_dispatched_forward_##classname = ::blobrt_caffe_portable::note_dispatched_layer(#classname);  \
  }                                                                                                               \
  INSTANTIATE_LAYER_GPU_FORWARD(classname)
#define BLOBRT_CAFFE_GPU_BACKWARD(classname)                                                                      \
  template <typename Dtype>                                                                                       \
  void classname<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down, \
                                      const std::vector<Blob<Dtype>*>& bottom) {                                  \
    if (!::blobrt_caffe_portable::backward_on_device<Dtype>(#classname, static_cast<Layer<Dtype>*>(this), top,    \
                                                            propagate_down, bottom)) {                            \
      this->Backward_cpu(top, propagate_down, bottom);                                                            \
    }                                                                                                             \
  }                                                                                                               \
  namespace {                                                                                                     \
  const bool blobrt_dispatched_backward_##classname = ::blobrt_caffe_portable::note_dispatched_layer(#classname); \
  }                                                                                                               \
  INSTANTIATE_LAYER_GPU_BACKWARD(classname)
#define BLOBRT_CAFFE_GPU_METHODS(classname) \
  BLOBRT_CAFFE_GPU_FORWARD(classname);      \
  BLOBRT_CAFFE_GPU_BACKWARD(classname)

// A layer's other GPU members with a CPU twin (LRN's CrossChannelForward_gpu): only the
// .cu's own GPU methods call them; here they run the CPU twin.
#define BLOBRT_CAFFE_GPU_HELPER_FORWARD(classname, funcname)                                                       \
  STUB_GPU_FORWARD(classname, funcname)                                                                            \
  template void classname<float>::funcname##_gpu(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>&); \
  template void classname<double>::funcname##_gpu(const std::vector<Blob<double>*>&,                               \
                                                  const std::vector<Blob<double>*>&)
#define BLOBRT_CAFFE_GPU_HELPER_BACKWARD(classname, funcname)                                                      \
  STUB_GPU_BACKWARD(classname, funcname)                                                                           \
  template void classname<float>::funcname##_gpu(const std::vector<Blob<float>*>&, const std::vector<bool>&,       \
                                                 const std::vector<Blob<float>*>&);                               \
  template void classname<double>::funcname##_gpu(const std::vector<Blob<double>*>&, const std::vector<bool>&,     \
                                                  const std::vector<Blob<double>*>&)

#endif  // BLOBRT_CAFFE_PORTABLE_GPU_METHODS_HPP
