#include "device_registry.hpp"

#include <utility>

#include "addressable_device.hpp"
#include "blobrt/runtime.hpp"
#include "plugin_device.hpp"
#include "plugin_library.hpp"
#include "selection.hpp"

namespace blobrt {

DeviceRegistry::DeviceRegistry(std::shared_ptr<Device> host) {
  const std::string id = host->description().id();
  host_ = &(devices_[id] = std::move(host));
}

const std::shared_ptr<Device>& DeviceRegistry::open(const BackendSpec& spec, Requester who, Discovery& discovery) {
  const int index = spec.index < 0 ? 0 : spec.index;
  const std::string id = spec.name + ":" + std::to_string(index);
  auto cached = devices_.find(id);
  if (cached != devices_.end()) return cached->second;
  const Inventory& inv = discovery.inventory;
  if (spec.name == "host") {
    fail_unavailable(inv, spec, who, SkipCode::kNoSuchDevice, "the built-in host has only device 0");
  }
  // Only the plugin that claimed the name can be usable (a shadowed one never is).
  for (std::size_t i = 0; i < inv.plugins.size(); ++i) {
    const PluginReport& p = inv.plugins[i];
    if (p.name != spec.name || !p.usable) continue;
    if (index >= static_cast<int>(p.devices.size())) {
      fail_unavailable(inv, spec, who, SkipCode::kNoSuchDevice,
                       "it has " + std::to_string(p.devices.size()) + " device(s), numbered from 0");
    }
    LoadedPlugin& plugin = discovery.loaded[i];
    if (std::string why = load_on_demand(plugin, p); !why.empty()) {
      fail_unavailable(inv, spec, who, SkipCode::kLoadFailed, why);
    }
    std::shared_ptr<Device> device;
    try {
      device = open_plugin_device(plugin.library, plugin.table, p.devices[index], p.fork_safe);
    } catch (const Error& e) {
      fail_unavailable(inv, spec, who, SkipCode::kOpenFailed, e.what());
    }
    if (addressable_) device = make_addressable(std::move(device));
    return devices_[id] = std::move(device);
  }
  // Not usable: say why, from its report if there is one.
  for (const PluginReport& p : inv.plugins) {
    if (p.name == spec.name && !p.usable && !p.reason.empty()) {
      fail_unavailable(inv, spec, who, skip_code(p.status), p.reason);
    }
  }
  fail_unavailable(inv, spec, who, SkipCode::kNotFound, "no plugin with that name was found");
}

const std::shared_ptr<Device>* DeviceRegistry::find(const std::shared_ptr<Device>& device) const {
  if (!device) return nullptr;
  auto found = devices_.find(device->description().id());
  return found != devices_.end() && found->second == device ? &found->second : nullptr;
}

bool DeviceRegistry::request_addressable() {
  addressable_ = true;
  for (const auto& [id, device] : devices_) {
    if (!handles_take_offsets(*device)) return false;
  }
  return true;
}

}  // namespace blobrt
