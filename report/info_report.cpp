#include "info_report.hpp"

#include "blobrt/error.hpp"
#include "blobrt/plugin_abi.h"
#include "blobrt/runtime.hpp"
#include "dist_info.hpp"
#include "selection_report.hpp"

namespace blobrt::tools {

json device_report(const DeviceDescription& d) {
  return {{"id", d.id()},
          {"backend", d.backend},
          {"index", d.index},
          {"name", d.name},
          {"details", string_or_null(d.details)},
          {"type", to_string(d.kind)},
          {"memory_bytes", d.memory_bytes},
          {"memory_model", to_string(d.memory_model)},
          // What the device natively is (DLPack's device type and id) and what its handles allow.
          {"native_type", d.native_type == NativeDeviceType::kUnknown ? json(nullptr) : json(to_string(d.native_type))},
          {"dlpack_device", d.native_type == NativeDeviceType::kUnknown
                                ? json(nullptr)
                                : json::array({static_cast<int>(d.native_type), d.native_index})},
          {"addressable_handles", d.addressable_handles},
          {"view_alignment", d.view_alignment},
          {"supports_fp64", d.supports_fp64},
          {"has_pinned_host", d.has_pinned_host}};
}

namespace {

json plugin_report(const PluginReport& p) {
  json devices = json::array();
  for (const DeviceDescription& d : p.devices) devices.push_back(device_report(d));
  json found = json::array();
  const std::vector<std::string> files = required_library_files(p);
  for (std::size_t i = 0; i < p.required_libraries.size(); ++i) {
    found.push_back(i < files.size() && !files[i].empty() ? json(files[i]) : json(nullptr));
  }
  return {{"name", string_or_null(p.name)},
          {"builtin", false},
          {"manifest", p.manifest},
          {"library", string_or_null(p.library)},
          {"abi", string_or_null(p.abi)},
          {"priority", p.priority},
          {"library_version", string_or_null(p.library_version)},
          {"requires", p.required_libraries},
          {"requires_found", found},
          {"fork_safe", p.fork_safe},
          {"usable", p.usable},
          {"status", to_string(p.status)},
          {"reason", p.usable ? json(nullptr) : json(p.reason)},
          {"devices", devices}};
}

// The built-in host device, with the keys every plugin has.
json host_report() {
  return {{"name", "host"},
          {"builtin", true},
          {"manifest", nullptr},
          {"library", nullptr},
          {"abi", nullptr},
          {"priority", nullptr},
          {"library_version", nullptr},
          {"requires", json::array()},
          {"requires_found", json::array()},
          {"fork_safe", true},
          {"usable", true},
          {"status", to_string(PluginStatus::kUsable)},
          {"reason", nullptr},
          {"devices", json::array({device_report(host_device()->description())})}};
}

}  // namespace

json info_report() {
  const Inventory& inv = inventory();
  // Never throws: when the default cannot be selected, the error is in the report.
  const SelectionReport selection = selection_report();
  const std::string active = selection.error.empty() ? current_device_id() : "";
  json search_path = json::array();
  for (const SearchDirectory& d : inv.directories) {
    search_path.push_back({{"path", d.path},
                           {"origin", d.origin},
                           {"exists", d.exists},
                           {"refused", string_or_null(d.refused)}});
  }
  json plugins = json::array({host_report()});
  for (const PluginReport& p : inv.plugins) plugins.push_back(plugin_report(p));
  json dist = nullptr;
  const std::string scale = dist_json();
  if (scale != "null") {
    dist = json::parse(scale, nullptr, false);
    if (dist.is_discarded()) dist = {{"error", "libblobrt-dist described itself in invalid JSON"}};
  }
  return {{"schema_version", kInfoSchemaVersion},
          {"version", version()},
          {"abi", std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) + "." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR)},
          {"library", string_or_null(library_path())},
          {"environment_ignored", inv.environment_ignored},
          {"search_path", search_path},
          {"plugins", plugins},
          {"active", string_or_null(active)},
          {"selection", selection_json(selection)},
          {"dist", dist}};
}

}  // namespace blobrt::tools
