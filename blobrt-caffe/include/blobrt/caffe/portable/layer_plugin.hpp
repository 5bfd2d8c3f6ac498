// Caffe-layers plugins: a Caffe tree's own kernel .cu files, compiled by the toolkit of one
// kind of device memory (nvcc: CUDA), in a library of their own that the portable libcaffe
// loads at run time (docs/caffe-on-blobrt.md, "Caffe's own CUDA kernels on GPU nodes").
// libcaffe links no CUDA library; a GPU node adds the plugin beside it, and a CPU node of
// the same cluster runs the same libcaffe without it.
//
// - The plugin: caffe-on-blobrt.cmake compiles each layer .cu of the tree as it is, plus
//   one line per layer class (BLOBRT_CAFFE_LAYER_PLUGIN_METHODS below), and the
//   descriptor (BLOBRT_CAFFE_LAYER_PLUGIN_DESCRIPTOR), into
//   <libcaffe's folder>/blobrt-caffe-layers/libcaffe-layers-<memory>.so ("cuda": the
//   name blobrt::to_string gives the DLPack device type its kernels run on).
// - libcaffe: one line (BLOBRT_CAFFE_LAYER_PLUGINS_BESIDE_THIS_LIBRARY) names that
//   folder and the build's id: a hash of the Caffe tree's headers, which the plugin carries
//   too, so that a plugin built from another tree (other class layouts) is refused, not run.
// - libblobrt-caffe loads a plugin when a GPU method first runs on a device whose memory is
//   the plugin's (never on a CPU node: a process in CPU mode, or on another backend, does
//   not open it), and registers its layers (register_gpu_layer). A plugin that cannot be
//   loaded (its runtime library missing, another build's, a wrong descriptor) is skipped
//   with the reason, in blobrt's log at warn and in layer_plugin_report(); the layers then
//   run their CPU code as where no plugin is.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYER_PLUGIN_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYER_PLUGIN_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <blobrt/device.hpp>

#include "blobrt/caffe/portable/gpu_methods.hpp"

// The descriptor a plugin exports (C, as blobrt's device plugins: a later version adds
// fields at the end and says so in struct_size).
#define BLOBRT_CAFFE_LAYER_PLUGIN_ABI 1
extern "C" {
struct blobrt_caffe_layer_plugin {
  std::size_t struct_size;      // sizeof(blobrt_caffe_layer_plugin) of the plugin's build
  std::uint32_t abi;            // BLOBRT_CAFFE_LAYER_PLUGIN_ABI
  const char* name;             // "caffe-layers-cuda"
  const char* caffe_build;      // the Caffe build's id (its headers' hash)
  std::int32_t memory;          // blobrt::NativeDeviceType its kernels run on
  const char* toolkit;          // what compiled it ("CUDA 13.0"), for the report
  // Registers every layer's methods with register_gpu_layer; returns how many classes.
  std::size_t (*register_layers)(void);
};
}
#define BLOBRT_CAFFE_LAYER_PLUGIN_ENTRY "blobrt_caffe_layer_plugin_descriptor"

// What `blobrt info --caffe LIBCAFFE` prints (libblobrt-caffe; the command loads the given
// libcaffe, which brings this library, and calls it by name): the Caffe-layers plugins for
// the memory of every device this node has, loaded, and for each device which of the
// library's dispatching layer classes run on it and which run their CPU code in GPU mode.
// The text stays valid until the next call.
extern "C" const char* blobrt_caffe_layer_report(void);
#define BLOBRT_CAFFE_LAYER_REPORT_ENTRY "blobrt_caffe_layer_report"

namespace blobrt_caffe_portable {

// libcaffe's side: plugins for this Caffe build (`caffe_build`) are in `subdirectory` of
// the folder of the library that holds `address`.
void add_layer_plugin_folder_of(const void* address, const char* subdirectory, const char* caffe_build);

// Loads the plugins for devices of `memory` from every folder added (and, first, those of
// BLOBRT_CAFFE_LAYER_PLUGIN_PATH, colon-separated), once per process and memory kind; the
// GPU methods call this on their first call for a device. Returns how many loaded.
std::size_t load_layer_plugins(blobrt::NativeDeviceType memory);

// One line per plugin file found in those folders: its path, then "loaded: N layer
// classes (toolkit)", "skipped: REASON", or "not loaded: no device with MEMORY memory
// needed it in this process"; a line saying so where the folders hold none.
std::vector<std::string> layer_plugin_report();

// The plugin's side (generated sources; blobrt/caffe/portable/layer_plugin.hpp's macros).
struct PluginLayer {
  const char* layer_class;
  GpuLayerMethods float_methods;
  GpuLayerMethods double_methods;
};
// The plugin's own list of its layers (defined by BLOBRT_CAFFE_LAYER_PLUGIN_DESCRIPTOR, so
// each plugin has its own).
std::vector<PluginLayer>& plugin_layers();
inline bool add_plugin_layer(const PluginLayer& layer) {
  plugin_layers().push_back(layer);
  return true;
}

}  // namespace blobrt_caffe_portable

// In libcaffe (one generated source): plugins beside this library.
#define BLOBRT_CAFFE_LAYER_PLUGINS_BESIDE_THIS_LIBRARY(subdirectory, caffe_build)                   \
  namespace {                                                                                        \
  const bool blobrt_caffe_layer_plugin_folder = [] {                                                 \
    static const char here = 0;                                                                      \
    ::blobrt_caffe_portable::add_layer_plugin_folder_of(&here, subdirectory, caffe_build);           \
    return true;                                                                                     \
  }();                                                                                               \
  }

// The plugin's kernels launch on the CUDA device of the calling thread's blobrt device
// (Caffe::SetDevice in the portable libcaffe selects blobrt's device only, and blobrt's
// cuda backend restores the runtime's device after each call): set where it differs.
#ifdef __CUDACC__
namespace blobrt_caffe_portable {
inline void cuda_follows_thread_device() {
  const int wanted = blobrt::current_device()->description().native_index;
  int current = -1;
  if ((::cudaGetDevice)(&current) != cudaSuccess || current != wanted) (::cudaSetDevice)(wanted);
}
}  // namespace blobrt_caffe_portable
#define BLOBRT_CAFFE_LAYER_PLUGIN_ENTER() ::blobrt_caffe_portable::cuda_follows_thread_device()
#else
#define BLOBRT_CAFFE_LAYER_PLUGIN_ENTER() (void)0
#endif

// In the plugin, inside namespace caffe after the layer's .cu: its GPU methods, as that .cu
// defined them, for the registry. The call is qualified, so it runs the .cu's definition
// in this plugin (linked -Bsymbolic-functions: libcaffe's dispatching one of the same name
// is not seen) and not the virtual method, which is libcaffe's. A method the .cu does not
// define is not referred to at all (if constexpr): a reference would bind to libcaffe's,
// which dispatches here. Forward_gpu is protected: the call is made from a class derived
// from the layer's, never constructed; the Layer<Dtype>* the registry hands over is cast
// down to it. That cast is to a type the object is not (formally undefined; the class adds
// no member, and every compiler Caffe builds with calls the method on the same address).
#define BLOBRT_CAFFE_LAYER_PLUGIN_METHODS(classname, with_forward, with_backward)                                \
  template <typename Dtype>                                                                                      \
  struct BlobrtPluginCall_##classname : classname<Dtype> {                                                       \
    using Blobs = std::vector<Blob<Dtype>*>;                                                                     \
    static BlobrtPluginCall_##classname* self(void* layer) {                                                     \
      return static_cast<BlobrtPluginCall_##classname*>(static_cast<Layer<Dtype>*>(layer));                       \
    }                                                                                                            \
    static void forward(void* layer, const void* bottom, const void* top) {                                      \
      BLOBRT_CAFFE_LAYER_PLUGIN_ENTER();                                                                         \
      self(layer)->classname<Dtype>::Forward_gpu(*static_cast<const Blobs*>(bottom), *static_cast<const Blobs*>(top)); \
    }                                                                                                            \
    static void backward(void* layer, const void* top, const std::vector<bool>& propagate_down,                  \
                         const void* bottom) {                                                                   \
      BLOBRT_CAFFE_LAYER_PLUGIN_ENTER();                                                                         \
      self(layer)->classname<Dtype>::Backward_gpu(*static_cast<const Blobs*>(top), propagate_down,               \
                                                  *static_cast<const Blobs*>(bottom));                           \
    }                                                                                                            \
    static ::blobrt_caffe_portable::GpuLayerMethods methods() {                                                  \
      ::blobrt_caffe_portable::GpuLayerMethods m;                                                                \
      if constexpr (with_forward) m.forward = &forward;                                                          \
      if constexpr (with_backward) m.backward = &backward;                                                       \
      return m;                                                                                                  \
    }                                                                                                            \
  };                                                                                                             \
  namespace {                                                                                                    \
  const bool blobrt_plugin_layer_##classname = ::blobrt_caffe_portable::add_plugin_layer(                        \
      {#classname, BlobrtPluginCall_##classname<float>::methods(), BlobrtPluginCall_##classname<double>::methods()}); \
  }

// In the plugin (one generated source): its descriptor.
#define BLOBRT_CAFFE_LAYER_PLUGIN_DESCRIPTOR(plugin_name, caffe_build, memory_type, toolkit_text)       \
  std::vector<::blobrt_caffe_portable::PluginLayer>& blobrt_caffe_portable::plugin_layers() {          \
    static std::vector<PluginLayer> layers;                                                            \
    return layers;                                                                                     \
  }                                                                                                    \
  namespace {                                                                                          \
  std::size_t blobrt_register_plugin_layers() {                                                        \
    for (const auto& layer : ::blobrt_caffe_portable::plugin_layers()) {                               \
      ::blobrt_caffe_portable::register_gpu_layer(layer.layer_class, blobrt::Precision::kFloat32,      \
                                                  memory_type, layer.float_methods);                   \
      ::blobrt_caffe_portable::register_gpu_layer(layer.layer_class, blobrt::Precision::kFloat64,      \
                                                  memory_type, layer.double_methods);                  \
    }                                                                                                  \
    return ::blobrt_caffe_portable::plugin_layers().size();                                            \
  }                                                                                                    \
  const blobrt_caffe_layer_plugin blobrt_plugin_descriptor = {                                        \
      sizeof(blobrt_caffe_layer_plugin), BLOBRT_CAFFE_LAYER_PLUGIN_ABI, plugin_name, caffe_build,      \
      static_cast<std::int32_t>(memory_type), toolkit_text, &blobrt_register_plugin_layers};           \
  }                                                                                                    \
  extern "C" __attribute__((visibility("default"))) const blobrt_caffe_layer_plugin*                 \
  blobrt_caffe_layer_plugin_descriptor() {                                                             \
    return &blobrt_plugin_descriptor;                                                                  \
  }

#endif  // BLOBRT_CAFFE_PORTABLE_LAYER_PLUGIN_HPP
