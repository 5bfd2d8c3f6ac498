// `blobrt info --caffe LIBCAFFE`'s section (blobrt_caffe_layer_report, layer_plugin.hpp):
// which layer classes of a portable Caffe build run on each device of this node.
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <blobrt/runtime.hpp>

#include "blobrt/caffe/portable/gpu_methods.hpp"
#include "blobrt/caffe/portable/layer_plugin.hpp"

namespace blobrt_caffe_portable {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

std::string layer_report() {
  std::ostringstream out;
  const std::vector<std::string> layers = dispatched_layers();
  out << "Caffe layers:\n";
  if (layers.empty()) {
    out << "  this Caffe library dispatches no layer's GPU methods (not a portable build: in GPU mode each layer "
           "runs its CPU code, or its own CUDA code in a CUDA build)\n";
    return out.str();
  }
  out << "  " << layers.size() << " layer classes with kernels: " << joined(layers) << "\n";
  // Every device this node has, opened, and the plugins for each kind of memory loaded.
  std::vector<std::shared_ptr<blobrt::Device>> devices;
  for (const std::string& id : blobrt::available_devices()) {
    try {
      devices.push_back(blobrt::open_device(id));
    } catch (const std::exception& error) {
      out << "  " << id << ": not opened: " << error.what() << "\n";
    }
  }
  std::set<blobrt::NativeDeviceType> kinds;
  for (const auto& device : devices) kinds.insert(device->description().native_type);
  for (const blobrt::NativeDeviceType kind : kinds) load_layer_plugins(kind);
  out << "  Caffe-layers plugins:\n";
  for (const std::string& line : layer_plugin_report()) out << "    " << line << "\n";
  for (const auto& device : devices) {
    std::vector<std::string> native, cpu;
    for (const std::string& layer : layers) {
      const LayerMethods found = find_layer_methods(layer, blobrt::Precision::kFloat32, *device);
      if (found.native.forward || found.native.backward) {
        native.push_back(layer);
      } else if (found.portable.forward || found.portable.backward) {
        native.push_back(layer + " (blobrt)");  // blobrt's operations, on this device's kernels
      } else {
        cpu.push_back(layer);
      }
    }
    const auto& description = device->description();
    out << "  " << description.id() << " (" << blobrt::to_string(description.native_type) << " memory): "
        << native.size() << " of " << layers.size() << " on the device (" << joined(native)
        << "); CPU code in GPU mode: " << joined(cpu) << "\n";
  }
  return out.str();
}

}  // namespace
}  // namespace blobrt_caffe_portable

extern "C" const char* blobrt_caffe_layer_report(void) {
  static std::string text;
  try {
    text = blobrt_caffe_portable::layer_report();
  } catch (const std::exception& error) {
    text = std::string("Caffe layers: the report failed: ") + error.what() + "\n";
  }
  return text.c_str();
}
