// The process-wide runtime: discovery once, the process default and each thread's own
// device, and carrying out the selection rules (docs/architecture.md, "Selection"). Its
// parts have a file each under runtime/: the open devices (device_registry.hpp), the
// orders auto and host math try devices in (device_order.hpp), and what selection says
// (diagnostics.hpp).
#include "blobrt/runtime.hpp"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "blobrt/error.hpp"
#include "blobrt_config.h"
#include "blobrt/environment.hpp"
#include "device_order.hpp"
#include "device_registry.hpp"
#include "device_source.hpp"
#include "diagnostics.hpp"
#include "host_device.hpp"
#include "loader.hpp"
#include "log.hpp"
#include "relocation.hpp"
#include "selection.hpp"

namespace blobrt {

const char* version() { return BLOBRT_VERSION; }

std::string library_path() {
  const std::string file = libblobrt_loaded_file();
  if (file.empty()) return "";
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::canonical(file, ec);
  return ec ? file : path.string();
}

namespace {

using Entry = const std::shared_ptr<Device>*;  // an entry of the DeviceRegistry

// The calling thread's own device (DeviceGuard, select_thread_device): an entry of the
// registry. Null: the process default.
thread_local Entry thread_device = nullptr;

class Runtime {
 public:
  // Never destroyed: static destructors and atexit handlers may call blobrt after main
  // returns (a Blob freed at exit holds its device itself). The plugin devices are closed
  // at exit by their own handler, before the plugins' libraries are torn down
  // (device/exit_guard.hpp).
  static Runtime& get() {
    static Runtime* const runtime = new Runtime;
    return *runtime;
  }

  const Inventory& inventory() { return discovery().inventory; }

  std::vector<std::string> required_files(const PluginReport& plugin) {
    Discovery& found = discovery();
    for (std::size_t i = 0; i < found.inventory.plugins.size(); ++i) {
      if (found.inventory.plugins[i].manifest == plugin.manifest) return found.loaded[i].required_files;
    }
    return {};
  }

  const std::shared_ptr<Device>& process_default() {
    // Fast path: one acquire load once the default is selected.
    if (Entry device = default_.load(std::memory_order_acquire)) return *device;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!default_.load(std::memory_order_relaxed)) {
      auto requested = environment::get("BLOBRT_BACKEND");
      std::string spec = requested && !requested->empty() ? *requested : "auto";
      select_locked(spec, requested ? Requester::kEnvironment : Requester::kDefault);
    }
    return *default_.load(std::memory_order_relaxed);
  }

  void select(const std::string& spec) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      select_locked(spec, Requester::kSelectBackend);
    }
    thread_device = nullptr;  // this thread follows the default it just set
  }

  const std::shared_ptr<Device>& current() {
    if (Entry device = thread_device) return *device;
    return process_default();
  }

  // The entry for `text`, opened if needed, for a thread to select or to open without
  // selecting. Does not change any selection.
  Entry entry_for(const std::string& text, Requester who) {
    std::lock_guard<std::mutex> lock(mutex_);
    const BackendSpec spec = parse_spec_for(text, who);
    return spec.name == "auto" ? choose_auto().first : &registry_.open(spec, who, discovery());
  }

  // The entry holding `device`; throws if the runtime did not open it.
  Entry entry_of(const std::shared_ptr<Device>& device, Requester who) {
    if (!device) detail::fail(to_string(who), ": a null device");
    std::lock_guard<std::mutex> lock(mutex_);
    if (Entry entry = registry_.find(device)) return entry;
    const std::string id = device->description().id();
    detail::fail(to_string(who), ": device ", id, " (", device->description().name,
                 ") is not one the runtime opened; name it instead (DeviceGuard(\"", id, "\"))");
  }

  std::vector<std::string> log() {
    process_default();
    std::lock_guard<std::mutex> lock(mutex_);
    return selection_lines(selection_);
  }

  SelectionReport report() {
    try {
      process_default();
    } catch (const Error&) {
      std::lock_guard<std::mutex> lock(mutex_);
      return failed_;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return selection_;
  }

  std::vector<std::string> available() {
    std::vector<std::string> ids{"host:0"};
    for (const PluginReport& p : inventory().plugins) {
      if (!p.usable) continue;
      for (const DeviceDescription& d : p.devices) ids.push_back(d.id());
    }
    return ids;
  }

  const std::shared_ptr<Device>& host() { return registry_.host(); }

  bool request_addressable() {
    std::lock_guard<std::mutex> lock(mutex_);
    return registry_.request_addressable();
  }

  // host_math_device(): chosen once, under the lock that opening a device takes.
  const std::shared_ptr<Device>& host_math() {
    std::call_once(host_math_chosen_, [this] {
      std::lock_guard<std::mutex> lock(mutex_);
      host_math_ = choose_host_math();
    });
    return *host_math_;
  }

 private:
  Runtime() : registry_(make_host_device()) {
    if (environment::get("BLOBRT_ADDRESSABLE_HANDLES").value_or("") == "1") registry_.request_addressable();
  }

  Discovery& discovery() {
    std::call_once(discovered_, [this] { discovery_ = discover_plugins(); });
    return discovery_;
  }

  // Selects the process default and records how (selection_report()). A failure leaves the
  // default as it was; when there is none yet, the failure is what the report shows.
  void select_locked(const std::string& text, Requester who) {
    SelectionReport report;
    Entry chosen = nullptr;
    try {
      const BackendSpec spec = parse_spec_for(text, who);
      if (spec.name == "auto") {
        std::tie(chosen, report) = choose_auto();
      } else {
        chosen = &registry_.open(spec, who, discovery());
        report.chosen = (*chosen)->description().id();
        report.why = named_by(who);
        report.skipped = passed_over_by_name(inventory(), spec.name, not_named_reason(who, text));
      }
    } catch (const Error& e) {
      if (!default_.load(std::memory_order_relaxed)) {
        failed_ = SelectionReport{text, to_string(who), "", "", {}, e.what()};
        if (const auto* unavailable = dynamic_cast<const Unavailable*>(&e)) failed_.skipped.push_back(unavailable->skip);
      }
      throw;
    }
    report.requested = text;
    report.origin = to_string(who);
    selection_ = std::move(report);
    // The registry's entries are never changed or removed once made: readers take the
    // default with one atomic load, without the lock, race-free.
    default_.store(chosen, std::memory_order_release);
    log::info("active device ", (*chosen)->description().id(), " (", (*chosen)->description().name, ")");
  }

  // auto: the candidates in auto_order's order, the first that opens now; the built-in host
  // device when none does. A device that a probe found usable but that will not open now
  // (busy, taken by another process since) is skipped for the next, as one the probe had
  // refused would have been. Nothing is skipped silently.
  std::pair<Entry, SelectionReport> choose_auto() {
    const AutoOrder order = auto_order(inventory());
    SelectionReport report;
    report.requested = "auto";
    std::vector<std::string> accelerators_skipped;  // "NAME (reason)", for the one warning
    for (const AutoUnusable& u : order.unusable) {
      report.skipped.push_back(u.skip);
      log::info("auto: skipped ", u.skip.backend, ": ", u.skip.reason);
      if (u.drives_accelerator) accelerators_skipped.push_back(u.skip.backend + " (" + u.skip.reason + ")");
    }
    Entry chosen = nullptr;
    for (const AutoCandidate& c : order.candidates) {
      if (chosen) {
        report.skipped.push_back({c.backend, "", SkipCode::kLowerPriority, auto_lower_priority(c.priority)});
        continue;
      }
      try {
        chosen = &registry_.open(BackendSpec{c.backend, c.index}, Requester::kAuto, discovery());
        report.chosen = c.id();
        report.why = c.why;
      } catch (const Unavailable& e) {
        const SelectionSkip skip = auto_could_not_take(e.skip);
        report.skipped.push_back(skip);
        log::info("auto: skipped ", c.id(), ": ", skip.reason);
        if (c.drives_accelerator) accelerators_skipped.push_back(c.id() + " (" + first_line(e.skip.reason) + ")");
      }
    }
    if (!chosen) {
      chosen = &registry_.host();
      report.chosen = (*chosen)->description().id();
      report.why = auto_fell_back(!order.candidates.empty());
      log::info("auto: no usable plugin, using the built-in host device");
    } else {
      report.skipped.push_back({"host", "", SkipCode::kBuiltinLast, auto_builtin_last()});
    }
    warn_accelerators_skipped(accelerators_skipped, **chosen);
    return {chosen, report};
  }

  // Once per process, the accelerator plugins auto passed over (device_order.hpp says which
  // count). Nothing on a node where none was skipped.
  void warn_accelerators_skipped(const std::vector<std::string>& skipped, const Device& chosen) {
    if (skipped.empty() || accelerators_warned_ || !log::enabled(LogLevel::kWarn)) return;
    accelerators_warned_ = true;
    log::warn(accelerators_skipped_warning(skipped, chosen.description()));
  }

  // The first of host_math_order's candidates that opens; the built-in host device when none does.
  Entry choose_host_math() {
    for (const Candidate& c : host_math_order(inventory())) {
      try {
        Entry device = &registry_.open(BackendSpec{c.backend, c.index}, Requester::kHostMath, discovery());
        log::info("host math (caffe_cpu_*) runs on ", (*device)->description().id(), " (",
                  (*device)->description().name, ", priority ", c.priority, ")");
        return device;
      } catch (const Error& e) {
        log::info("host math: skipped ", c.id(), ": ", first_line(e.what()));
      }
    }
    log::info("host math (caffe_cpu_*) runs on the built-in host device: no plugin device with host memory");
    return &registry_.host();
  }

  std::once_flag discovered_;
  Discovery discovery_;
  std::mutex mutex_;            // guards everything below but default_'s fast-path load
  DeviceRegistry registry_;
  std::atomic<Entry> default_{nullptr};  // the process default
  std::once_flag host_math_chosen_;
  Entry host_math_ = nullptr;
  SelectionReport selection_;  // how the process default was selected
  SelectionReport failed_;     // the failure, while no default could be selected
  bool accelerators_warned_ = false;
};

}  // namespace

const Inventory& inventory() { return Runtime::get().inventory(); }
std::vector<std::string> required_library_files(const PluginReport& plugin) {
  return Runtime::get().required_files(plugin);
}
const std::shared_ptr<Device>& current_device() { return Runtime::get().current(); }
const std::shared_ptr<Device>& default_device() { return Runtime::get().process_default(); }
std::string current_device_id() { return current_device()->description().id(); }
std::vector<std::string> selection_log() { return Runtime::get().log(); }
SelectionReport selection_report() { return Runtime::get().report(); }
void select_backend(const std::string& spec) { Runtime::get().select(spec); }

void select_thread_device(const std::string& spec) {
  thread_device = Runtime::get().entry_for(spec, Requester::kSelectThreadDevice);
  log::debug("thread device ", (*thread_device)->description().id());
}
void reset_thread_device() { thread_device = nullptr; }

DeviceGuard::DeviceGuard(const std::string& spec)
    : previous_(thread_device), device_(Runtime::get().entry_for(spec, Requester::kDeviceGuard)) {
  thread_device = device_;
}
DeviceGuard::DeviceGuard(const std::shared_ptr<Device>& device)
    : previous_(thread_device), device_(Runtime::get().entry_of(device, Requester::kDeviceGuard)) {
  thread_device = device_;
}
DeviceGuard::~DeviceGuard() { thread_device = previous_; }
std::shared_ptr<Device> open_device(const std::string& spec) {
  return *Runtime::get().entry_for(spec, Requester::kOpenDevice);
}
std::vector<std::string> available_devices() { return Runtime::get().available(); }
bool request_addressable_handles() { return Runtime::get().request_addressable(); }

// active_device() and active_backend() are inline aliases now (runtime.hpp); programs built
// against an older runtime.hpp call them out of line, so libblobrt.so.1 keeps exporting them:
// taking their addresses here (kept by `used`) makes this file emit them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
[[gnu::used]] static auto* const keep_exported_active_device = &active_device;
[[gnu::used]] static auto* const keep_exported_active_backend = &active_backend;
#pragma GCC diagnostic pop
const std::shared_ptr<Device>& host_device() { return Runtime::get().host(); }
std::shared_ptr<Device> host_math_device() { return Runtime::get().host_math(); }

}  // namespace blobrt

namespace blobrt {
namespace {
// memory/ asks the device layer for the thread's current device and the built-in host
// device (device/device_source.hpp): these are the runtime's answers, installed while
// libblobrt is loaded, before any caller can make a SyncedMemory.
const bool device_source_installed = (device_source::install({&current_device, &host_device}), true);
}  // namespace
}  // namespace blobrt
