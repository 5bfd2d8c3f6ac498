// The process-wide runtime: discovery once, the open devices, the process default and
// each thread's own device, and the selection rules (docs/architecture.md, "Selection").
#include "blobrt/runtime.hpp"

#include <algorithm>
#include <filesystem>

#include <dlfcn.h>
#include <atomic>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <utility>

#include "blobrt/error.hpp"
#include "backend_spec.hpp"
#include "blobrt_config.h"
#include "blobrt/environment.hpp"
#include "device_source.hpp"
#include "host_device.hpp"
#include "loader.hpp"
#include "log.hpp"
#include "manifest.hpp"
#include "plugin_device.hpp"
#include "selection.hpp"

namespace blobrt {

const char* to_string(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::kCpu: return "CPU";
    case DeviceKind::kGpu: return "GPU";
    case DeviceKind::kAccelerator: return "accelerator";
  }
  return "unknown";
}

const char* to_string(MemoryModel model) noexcept {
  switch (model) {
    case MemoryModel::kShared: return "shared";
    case MemoryModel::kAliased: return "aliased";
    case MemoryModel::kSeparate: return "separate";
  }
  return "unknown";
}

const char* version() { return BLOBRT_VERSION; }

std::string library_path() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&library_path), &info) || !info.dli_fname) return "";
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : path.string();
}

namespace {

using Spec = BackendSpec;

// The calling thread's own device (DeviceGuard, select_thread_device): an entry of the
// runtime's devices_, which is never changed or removed. Null: the process default.
thread_local const std::shared_ptr<Device>* thread_device = nullptr;

// A backend or device that cannot be used: the Error callers see, with the code and the
// bare reason the selection report keeps.
class Unavailable : public Error {
 public:
  Unavailable(const std::string& message, SelectionSkip skip) : Error(message), skip(std::move(skip)) {}
  SelectionSkip skip;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The manifest says the plugin exists to drive accelerators (`accelerator = yes`).
bool declares_accelerator(const PluginReport& p) {
  try {
    return parse_manifest(read_manifest_file(p.manifest)).accelerator;
  } catch (const std::exception&) {
    return false;
  }
}

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

  const Inventory& inventory() {
    std::call_once(discovered_, [this] { discovery_ = discover_plugins(); });
    return discovery_.inventory;
  }

  const std::shared_ptr<Device>& active() {
    // Fast path: one acquire load once a device is active.
    if (const std::shared_ptr<Device>* device = active_.load(std::memory_order_acquire)) return *device;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!active_.load(std::memory_order_relaxed)) {
      auto requested = environment::get("BLOBRT_BACKEND");
      std::string spec = requested && !requested->empty() ? *requested : "auto";
      select_locked(spec, requested ? "BLOBRT_BACKEND" : "default");
    }
    return *active_.load(std::memory_order_relaxed);
  }

  void select(const std::string& spec) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      select_locked(spec, "select_backend");
    }
    thread_device = nullptr;  // this thread follows the default it just set
  }

  const std::shared_ptr<Device>& current() {
    if (const std::shared_ptr<Device>* device = thread_device) return *device;
    return active();
  }

  // The devices_ entry for `text`, opened if needed, for a thread to select (`origin` names
  // who asked, in the error). Does not change any selection.
  const std::shared_ptr<Device>* entry_for(const std::string& text, const std::string& origin) {
    std::lock_guard<std::mutex> lock(mutex_);
    Spec spec = parse_backend_spec(text, origin);
    std::shared_ptr<Device> device = spec.name == "auto" ? choose_auto().first : open_locked(spec, origin);
    return &devices_.at(device->description().id());
  }

  // The devices_ entry holding `device`; throws if the runtime did not open it.
  const std::shared_ptr<Device>* entry_of(const std::shared_ptr<Device>& device, const std::string& origin) {
    if (!device) detail::fail(origin, ": a null device");
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string id = device->description().id();
    auto found = devices_.find(id);
    if (found == devices_.end() || found->second != device) {
      detail::fail(origin, ": device ", id, " (", device->description().name,
                   ") is not one the runtime opened; name it instead (DeviceGuard(\"", id, "\"))");
    }
    return &found->second;
  }

  std::shared_ptr<Device> open(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    Spec spec = parse_backend_spec(text, "device");
    if (spec.name == "auto") return choose_auto().first;
    return open_locked(spec, "device");
  }

  std::vector<std::string> log() {
    active();
    std::lock_guard<std::mutex> lock(mutex_);
    return selection_lines(selection_);
  }

  SelectionReport report() {
    try {
      active();
    } catch (const Error&) {
      std::lock_guard<std::mutex> lock(mutex_);
      return failed_;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return selection_;
  }

  std::vector<std::string> available() {
    std::vector<std::string> ids{"host:0"};
    const Inventory& inv = inventory();
    for (const PluginReport& p : inv.plugins) {
      if (!p.usable) continue;
      for (const DeviceDescription& d : p.devices) ids.push_back(d.id());
    }
    return ids;
  }

  const std::shared_ptr<Device>& host() { return host_; }

  // host_math_device(): chosen once, under the lock that opening a device takes.
  const std::shared_ptr<Device>& host_math() {
    std::call_once(host_math_chosen_, [this] {
      std::lock_guard<std::mutex> lock(mutex_);
      host_math_ = choose_host_math();
    });
    return host_math_;
  }

 private:
  Runtime() : host_(make_host_device()) { devices_[host_->description().id()] = host_; }

  // Selects the process default and records how (selection_report()). A failure leaves the
  // default as it was; when there is none yet, the failure is what the report shows.
  void select_locked(const std::string& text, const std::string& origin) {
    SelectionReport report;
    std::shared_ptr<Device> chosen;
    try {
      Spec spec = parse_backend_spec(text, origin == "select_backend" ? "backend" : "BLOBRT_BACKEND");
      if (spec.name == "auto") {
        std::tie(chosen, report) = choose_auto();
      } else {
        chosen = open_locked(spec, origin);
        report.chosen = chosen->description().id();
        report.why = "named by " + origin;
        report.skipped = not_named(spec, origin + " named " + text);
      }
    } catch (const Error& e) {
      if (!active_.load(std::memory_order_relaxed)) {
        failed_ = SelectionReport{text, origin, "", "", {}, e.what()};
        if (const auto* unavailable = dynamic_cast<const Unavailable*>(&e)) failed_.skipped.push_back(unavailable->skip);
      }
      throw;
    }
    report.requested = text;
    report.origin = origin;
    selection_ = std::move(report);
    // The active device is one of devices_' entries, which are never changed or removed
    // once made: readers take it with one atomic load, without the lock, race-free.
    const std::shared_ptr<Device>& entry = devices_.at(chosen->description().id());
    active_.store(&entry, std::memory_order_release);
    log::info("active device ", entry->description().id(), " (", entry->description().name, ")");
  }

  // A named selection passes over every other backend: the built-in host unless it was
  // named, and each plugin of another name (one of the same name that the loader refused,
  // a shadowed one, keeps its own code).
  std::vector<SelectionSkip> not_named(const Spec& spec, const std::string& reason) {
    std::vector<SelectionSkip> skipped;
    if (spec.name != "host") skipped.push_back({"host", "", SkipCode::kNotNamed, reason});
    for (const PluginReport& p : inventory().plugins) {
      const std::string name = p.name.empty() ? p.manifest : p.name;
      if (p.name != spec.name) {
        skipped.push_back({name, "", SkipCode::kNotNamed, reason});
      } else if (!p.usable) {
        skipped.push_back({name, "", skip_code(p.status), p.reason});
      }
    }
    return skipped;
  }

  // auto: usable plugins with an accelerator device first, then by manifest priority;
  // the built-in host device when no plugin is usable. A device that a probe found usable
  // but that will not open now (busy, taken by another process since) is skipped for the
  // next, as one the probe had refused would have been. Nothing is skipped silently.
  std::pair<std::shared_ptr<Device>, SelectionReport> choose_auto() {
    const Inventory& inv = inventory();
    SelectionReport report;
    report.requested = "auto";
    std::vector<std::string> accelerators_skipped;  // for warn_accelerators_skipped
    auto first_accelerator = [](const PluginReport& p) {
      for (const DeviceDescription& d : p.devices) {
        if (d.kind != DeviceKind::kCpu) return d.index;
      }
      return -1;
    };
    std::vector<const PluginReport*> order;
    for (const PluginReport& p : inv.plugins) {
      if (p.usable) {
        order.push_back(&p);
        continue;
      }
      const std::string name = p.name.empty() ? p.manifest : p.name;
      report.skipped.push_back({name, "", skip_code(p.status), p.reason});
      log::info("auto: skipped ", name, ": ", p.reason);
      if (log::enabled(LogLevel::kWarn) && declares_accelerator(p)) {
        accelerators_skipped.push_back(name + " (" + p.reason + ")");
      }
    }
    std::stable_sort(order.begin(), order.end(), [&](const PluginReport* a, const PluginReport* b) {
      return std::make_pair(first_accelerator(*a) >= 0, a->priority) >
             std::make_pair(first_accelerator(*b) >= 0, b->priority);
    });
    std::shared_ptr<Device> chosen;
    for (const PluginReport* p : order) {
      const int accelerator = first_accelerator(*p);
      const int index = accelerator >= 0 ? accelerator : 0;
      const std::string id = p->name + ":" + std::to_string(index);
      if (chosen) {
        report.skipped.push_back({p->name, "", SkipCode::kLowerPriority,
                                  "lower in the auto order (priority " + std::to_string(p->priority) + ")"});
        continue;
      }
      try {
        chosen = open_locked(Spec{p->name, index}, "auto");
        report.chosen = id;
        report.why = "priority " + std::to_string(p->priority) + (accelerator >= 0 ? ", has an accelerator" : "");
      } catch (const Unavailable& e) {
        // Its own reason for a device that would not open ("usable when probed, but" for
        // one that no longer opens; a library that will not load now says so itself).
        const std::string why = first_line(e.skip.reason);
        SelectionSkip skip = e.skip;
        skip.reason = skip.code == SkipCode::kOpenFailed ? "usable when probed, but " + why : why;
        report.skipped.push_back(skip);
        log::info("auto: skipped ", id, ": ", skip.reason);
        if (log::enabled(LogLevel::kWarn) && (accelerator >= 0 || declares_accelerator(*p))) {
          accelerators_skipped.push_back(id + " (" + why + ")");
        }
      }
    }
    if (!chosen) {
      report.chosen = host_->description().id();
      report.why = order.empty() ? "no usable plugin found" : "no plugin device could be opened";
      log::info("auto: no usable plugin, using the built-in host device");
      warn_accelerators_skipped(accelerators_skipped, *host_);
      return {host_, report};
    }
    warn_accelerators_skipped(accelerators_skipped, *chosen);
    report.skipped.push_back({"host", "", SkipCode::kBuiltinLast, "the built-in device comes last in the auto order"});
    return {chosen, report};
  }

  // Once per process, the accelerator plugins auto passed over: ones with a GPU/accelerator
  // device that would not open, and unusable ones whose manifest says `accelerator = yes`
  // (a CUDA plugin on a node without a driver). Nothing on a node where none was skipped.
  void warn_accelerators_skipped(const std::vector<std::string>& skipped, const Device& chosen) {
    if (skipped.empty() || accelerators_warned_) return;
    accelerators_warned_ = true;
    std::string list;
    for (const std::string& s : skipped) list += (list.empty() ? "" : "; ") + s;
    const bool one = skipped.size() == 1;
    log::warn("auto skipped ", one ? "a plugin that drives" : "plugins that drive", " an accelerator: ", list,
              "; running on ", chosen.description().id(), " (", to_string(chosen.description().kind),
              "). BLOBRT_LOG=info shows every choice, BLOBRT_LOG=error hides this");
  }

  // Usable plugin devices with host-pointer handles, by manifest priority (then search
  // order); the first that opens. The built-in host device when none does.
  std::shared_ptr<Device> choose_host_math() {
    const Inventory& inv = inventory();
    std::vector<std::pair<const PluginReport*, int>> candidates;
    for (const PluginReport& p : inv.plugins) {
      if (!p.usable) continue;
      for (const DeviceDescription& d : p.devices) {
        if (d.memory_model == MemoryModel::kShared) candidates.emplace_back(&p, d.index);
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first->priority > b.first->priority; });
    for (const auto& [p, index] : candidates) {
      try {
        std::shared_ptr<Device> device = open_locked(Spec{p->name, index}, "host_math_device");
        log::info("host math (caffe_cpu_*) runs on ", device->description().id(), " (",
                  device->description().name, ", priority ", p->priority, ")");
        return device;
      } catch (const Error& e) {
        const std::string what = e.what();
        log::info("host math: skipped ", p->name, ":", index, ": ", what.substr(0, what.find('\n')));
      }
    }
    log::info("host math (caffe_cpu_*) runs on the built-in host device: no plugin device with host memory");
    return host_;
  }

  // The device `spec` names, opened once and kept; Unavailable (an Error) when it cannot be.
  std::shared_ptr<Device> open_locked(const Spec& spec, const std::string& origin) {
    int index = spec.index < 0 ? 0 : spec.index;
    std::string id = spec.name + ":" + std::to_string(index);
    auto cached = devices_.find(id);
    if (cached != devices_.end()) return cached->second;
    if (spec.name == "host") {
      fail_unavailable(spec, origin, SkipCode::kNoSuchDevice, "the built-in host has only device 0");
    }

    // The plugin that claimed the name (shadowed ones are never usable) is loaded here, the
    // first time one of its devices is opened: discovery loaded none (loader.hpp).
    const Inventory& inv = inventory();
    for (std::size_t i = 0; i < inv.plugins.size(); ++i) {
      const PluginReport& p = inv.plugins[i];
      if (p.name != spec.name || !p.usable) continue;
      if (index >= static_cast<int>(p.devices.size())) {
        fail_unavailable(spec, origin, SkipCode::kNoSuchDevice,
                         "it has " + std::to_string(p.devices.size()) + " device(s), numbered from 0");
      }
      LoadedPlugin& plugin = discovery_.loaded[i];
      if (std::string why = load_on_demand(plugin, p); !why.empty()) {
        fail_unavailable(spec, origin, SkipCode::kLoadFailed, why);
      }
      std::shared_ptr<Device> device;
      try {
        device = open_plugin_device(plugin.library, plugin.table, p.devices[index], p.fork_safe);
      } catch (const Error& e) {
        fail_unavailable(spec, origin, SkipCode::kOpenFailed, e.what());
      }
      devices_[id] = device;
      return device;
    }
    // Not loaded: say why, from the report if there is one.
    for (const PluginReport& p : inv.plugins) {
      if (p.name == spec.name && !p.usable && !p.reason.empty()) {
        fail_unavailable(spec, origin, skip_code(p.status), p.reason);
      }
    }
    fail_unavailable(spec, origin, SkipCode::kNotFound, "no plugin with that name was found");
  }

  [[noreturn]] void fail_unavailable(const Spec& spec, const std::string& origin, SkipCode code,
                                     const std::string& why) {
    const Inventory& inv = inventory();
    std::ostringstream s;
    s << "backend '" << spec.name << (spec.index >= 0 ? ":" + std::to_string(spec.index) : "")
      << "' requested by " << origin << " cannot be used: " << why << "\n";
    s << "searched:";
    if (inv.directories.empty()) s << " (no directories)";
    for (const SearchDirectory& d : inv.directories) {
      s << "\n  " << d.path << " (" << d.origin << (d.exists ? "" : ", does not exist")
        << (d.refused.empty() ? "" : ", " + d.refused) << ")";
    }
    if (inv.environment_ignored) s << "\n  (environment ignored: setuid/setgid process)";
    s << "\nfound:\n  host: built-in, usable (1 device)";
    for (const PluginReport& p : inv.plugins) {
      s << "\n  " << (p.name.empty() ? "?" : p.name) << ": " << p.manifest << ": ";
      if (p.usable) {
        s << "usable (" << p.devices.size() << " device" << (p.devices.size() == 1 ? "" : "s")
          << ")";
      } else {
        s << p.reason;
      }
    }
    // A device was tried for these; the others are about the backend as a whole.
    const bool device_tried = code == SkipCode::kNoSuchDevice || code == SkipCode::kLoadFailed ||
                              code == SkipCode::kOpenFailed;
    const std::string id = spec.name + ":" + std::to_string(spec.index < 0 ? 0 : spec.index);
    throw Unavailable(s.str(), SelectionSkip{spec.name, device_tried ? id : "", code, why});
  }

  std::once_flag discovered_;
  Discovery discovery_;
  std::mutex mutex_;
  std::atomic<const std::shared_ptr<Device>*> active_{nullptr};  // an entry of devices_
  std::shared_ptr<Device> host_;
  std::once_flag host_math_chosen_;
  std::shared_ptr<Device> host_math_;
  std::map<std::string, std::shared_ptr<Device>> devices_;  // opened once, kept open
  SelectionReport selection_;  // how the process default was selected
  SelectionReport failed_;     // the failure, while no default could be selected
  bool accelerators_warned_ = false;  // guarded by mutex_
};

}  // namespace

const Inventory& inventory() { return Runtime::get().inventory(); }
const std::shared_ptr<Device>& current_device() { return Runtime::get().current(); }
const std::shared_ptr<Device>& active_device() { return Runtime::get().current(); }
const std::shared_ptr<Device>& default_device() { return Runtime::get().active(); }
std::string active_backend() { return current_device()->description().id(); }
std::vector<std::string> selection_log() { return Runtime::get().log(); }
SelectionReport selection_report() { return Runtime::get().report(); }
void select_backend(const std::string& spec) { Runtime::get().select(spec); }

void select_thread_device(const std::string& spec) {
  thread_device = Runtime::get().entry_for(spec, "select_thread_device");
  log::debug("thread device ", (*thread_device)->description().id());
}
void reset_thread_device() { thread_device = nullptr; }

DeviceGuard::DeviceGuard(const std::string& spec)
    : previous_(thread_device), device_(Runtime::get().entry_for(spec, "DeviceGuard")) {
  thread_device = device_;
}
DeviceGuard::DeviceGuard(const std::shared_ptr<Device>& device)
    : previous_(thread_device), device_(Runtime::get().entry_of(device, "DeviceGuard")) {
  thread_device = device_;
}
DeviceGuard::~DeviceGuard() { thread_device = previous_; }
std::shared_ptr<Device> open_device(const std::string& spec) { return Runtime::get().open(spec); }
std::vector<std::string> available_devices() { return Runtime::get().available(); }
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
