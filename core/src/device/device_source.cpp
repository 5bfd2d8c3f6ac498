#include "device_source.hpp"

#include <atomic>

#include "blobrt/error.hpp"

namespace blobrt::device_source {
namespace {

// Constant-initialised: set before any caller can run (the runtime installs them while
// libblobrt is loaded), read with one load afterwards.
std::atomic<DeviceGetter> installed_current{nullptr};
std::atomic<DeviceGetter> installed_host{nullptr};

[[noreturn]] void not_installed(const char* which) {
  detail::fail("device_source::", which, "(): no device source installed (libblobrt's runtime installs it when the "
               "library is loaded)");
}

}  // namespace

void install(const Sources& sources) {
  if (!sources.current || !sources.host) {
    detail::fail("device_source::install: current ", sources.current ? "set" : "null", ", host ",
                 sources.host ? "set" : "null", "; both are needed");
  }
  installed_current.store(sources.current, std::memory_order_release);
  installed_host.store(sources.host, std::memory_order_release);
}

const std::shared_ptr<Device>& current() {
  const DeviceGetter get = installed_current.load(std::memory_order_acquire);
  if (!get) not_installed("current");
  return get();
}

const std::shared_ptr<Device>& host() {
  const DeviceGetter get = installed_host.load(std::memory_order_acquire);
  if (!get) not_installed("host");
  return get();
}

}  // namespace blobrt::device_source
