// The registry of layer GPU methods a backend provides, and the record of what ran how
// (blobrt/caffe/portable/gpu_methods.hpp). One per process, in libblobrt-caffe.
#include "blobrt/caffe/portable/gpu_methods.hpp"
#include "blobrt/caffe/portable/layer_plugin.hpp"

#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include <blobrt/log.hpp>

namespace blobrt_caffe_portable {
namespace {

using Key = std::tuple<std::string, blobrt::Precision, blobrt::NativeDeviceType>;

struct Registry {
  std::mutex mutex;
  std::map<Key, GpuLayerMethods> methods;
  std::map<std::pair<std::string, blobrt::Precision>, PortableLayerMethods> portable;
  // "ReLULayer Forward_gpu on simgpu:0" -> "CPU code" / "device", in the order first seen.
  std::vector<std::pair<std::string, std::string>> ran;
  // What was noted: by the call's own strings (a call site passes the same literals each
  // time) and device, so that a call seen before builds no string; then by the text.
  std::set<std::tuple<const char*, const char*, const blobrt::Device*, bool>> seen_calls;
  std::set<std::string> seen;
  std::set<std::string> dispatched;  // the classes whose GPU methods dispatch here
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: layers may run during exit
  return *instance;
}

void note(const char* layer_class, const char* method, const blobrt::Device& device, bool on_device) {
  Registry& r = registry();
  const char* how = on_device ? "device" : "CPU code";
  std::string what;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.seen_calls.emplace(layer_class, method, &device, on_device).second) return;
    what = std::string(layer_class) + " " + method + " on " + device.description().id();
    if (!r.seen.insert(what + ": " + how).second) return;
    r.ran.emplace_back(what, how);
  }
  blobrt::log_message(blobrt::LogLevel::kInfo, "caffe: ", what, ": ", how,
                      on_device ? "" : " (no GPU implementation for this layer on this device, or it declined the layer)");
}

}  // namespace

void register_gpu_layer(const std::string& layer_class, blobrt::Precision precision, blobrt::NativeDeviceType memory,
                        GpuLayerMethods methods) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.methods[Key{layer_class, precision, memory}] = methods;
}

LayerMethods find_layer_methods(const std::string& layer_class, blobrt::Precision precision,
                                const blobrt::Device& device) {
  // The first call for a kind of device memory loads the Caffe-layers plugins for it (their
  // registrations land below); outside the registry's lock, which registering takes.
  load_layer_plugins(device.description().native_type);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  LayerMethods found;
  const auto native = r.methods.find(Key{layer_class, precision, device.description().native_type});
  if (native != r.methods.end()) found.native = native->second;
  const auto portable = r.portable.find({layer_class, precision});
  if (portable != r.portable.end()) found.portable = portable->second;
  return found;
}

GpuLayerMethods find_gpu_layer(const std::string& layer_class, blobrt::Precision precision,
                               const blobrt::Device& device) {
  return find_layer_methods(layer_class, precision, device).native;
}

void register_portable_gpu_layer(const std::string& layer_class, blobrt::Precision precision,
                                 PortableLayerMethods methods) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.portable[{layer_class, precision}] = methods;
}

void note_cpu_fallback(const char* layer_class, const char* method, const blobrt::Device& device) {
  note(layer_class, method, device, false);
}

void note_on_device(const char* layer_class, const char* method, const blobrt::Device& device) {
  note(layer_class, method, device, true);
}

bool request_addressable_handles() {
  if (blobrt::request_addressable_handles()) return true;
  blobrt::log_message(blobrt::LogLevel::kWarn,
                      "caffe: a device whose buffer handles are not addresses was opened before Caffe's library "
                      "loaded; Caffe's GPU mode offsets handles and cannot run on it (open no device before)");
  return false;
}

bool note_dispatched_layer(const char* layer_class) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.dispatched.insert(layer_class);
  return true;
}

std::vector<std::string> dispatched_layers() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return {r.dispatched.begin(), r.dispatched.end()};
}

std::vector<std::string> gpu_method_report() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> lines;
  for (const auto& [what, how] : r.ran) lines.push_back(what + ": " + how);
  return lines;
}

}  // namespace blobrt_caffe_portable
