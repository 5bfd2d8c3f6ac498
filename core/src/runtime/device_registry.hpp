// The devices the runtime opened: each one once, on first use, and kept for the process's
// life, so that memory bound to a device stays usable and an entry's address never changes.
// The process default and every thread's own selection are pointers to these entries, read
// without a lock. Not thread-safe itself: the runtime calls it under its lock.
#ifndef BLOBRT_DEVICE_REGISTRY_HPP
#define BLOBRT_DEVICE_REGISTRY_HPP

#include <map>
#include <memory>
#include <string>

#include "backend_spec.hpp"
#include "blobrt/device.hpp"
#include "diagnostics.hpp"
#include "loader.hpp"

namespace blobrt {

class DeviceRegistry {
 public:
  // Holds the built-in host device from the start.
  explicit DeviceRegistry(std::shared_ptr<Device> host);

  // The built-in host device's entry.
  const std::shared_ptr<Device>& host() const { return *host_; }

  // The entry of the device `spec` names (device 0 when it names none). The first time, the
  // plugin that claimed the name is loaded (discovery loaded none: loader.hpp) and the device
  // opened. Throws Unavailable (diagnostics.hpp) naming `who` when it cannot be: no such
  // device, the library will not load now, the device will not open, or the plugin was not
  // usable or not found.
  const std::shared_ptr<Device>& open(const BackendSpec& spec, Requester who, Discovery& discovery);

  // The entry holding `device`; null when the registry did not open it (or it is null).
  const std::shared_ptr<Device>* find(const std::shared_ptr<Device>& device) const;

  // From now on a device whose handles are not addresses opens behind addressable ones
  // (addressable_device.hpp). False when such a device is open already (it stays as it is).
  bool request_addressable();

 private:
  std::map<std::string, std::shared_ptr<Device>> devices_;  // by id; never changed or removed
  bool addressable_ = false;
  const std::shared_ptr<Device>* host_;
};

}  // namespace blobrt

#endif
