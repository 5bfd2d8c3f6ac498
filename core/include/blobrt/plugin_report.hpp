// What the plugin loader found: the directories it searched and one report per manifest.
// The loading layer's own types (core/src/plugins/), public because blobrt::inventory()
// (runtime.hpp) returns them; this header needs nothing above the Device description.
#ifndef BLOBRT_PLUGIN_REPORT_HPP
#define BLOBRT_PLUGIN_REPORT_HPP

#include <string>
#include <vector>

#include "blobrt/device.hpp"

namespace blobrt {

// One directory the loader looked in, and why.
struct SearchDirectory {
  std::string path;
  std::string origin;  // "BLOBRT_PLUGIN_PATH", "BLOBRT_PLUGIN_SYSTEM_PATH" or "installed"
  bool exists = false;
  std::string refused;  // why its contents are not trusted ("" when searched)
};

// A plugin's verdict as a code that does not change with the wording of its reason
// (to_string gives its one spelling, `blobrt info --json`'s: "usable", "no_device", ...).
enum class PluginStatus {
  kUsable,           // loaded (or probed) and every device opened and closed
  kRefused,          // its manifest or library could have been written by another user
  kInvalidManifest,  // the manifest cannot be read or parsed, or names a library elsewhere
  kReservedName,     // named "host", the built-in device's name
  kShadowed,         // its name is claimed by a manifest earlier in the search path
  kNotLoadable,      // ABI, file, dependency, dlopen, entry point or table refused
  kInitFailed,       // device_count or device_properties failed
  kNoDevice,         // loaded and answered 0 devices (the reason says why)
  kWillNotOpen,      // a device was listed but would not open
  kNoAnswer,         // crashed, exited or hung while probed (never loaded into the process)
};
const char* to_string(PluginStatus status) noexcept;

// One manifest the loader read, and its verdict.
struct PluginReport {
  std::string name;              // backend name from the manifest ("" if unreadable)
  std::string manifest;          // path of the manifest file
  std::string library;           // path of the shared object it names
  std::string abi;               // ABI the manifest declares, "major.minor"
  int priority = 0;
  std::vector<std::string> required_libraries;  // the manifest's `requires`: shared libraries it needs
  bool fork_safe = false;        // its devices stay usable in a fork()ed child (manifest)
  // The manifest's `accelerator = yes`: the plugin exists to drive GPUs/accelerators. Known
  // even when it is not usable and so has no devices to look at; auto warns when it passes
  // over such a plugin (docs/architecture.md, "Logging"). False when the manifest is unreadable.
  bool accelerator = false;
  std::string library_version;   // from the loaded table, when it got that far
  bool usable = false;           // loaded and has at least one device (status == kUsable)
  PluginStatus status = PluginStatus::kNotLoadable;  // the verdict as a code
  std::string reason;            // why it is not usable (empty when usable)
  std::vector<DeviceDescription> devices;
};

struct Inventory {
  std::vector<SearchDirectory> directories;
  std::vector<PluginReport> plugins;  // in search order; the built-in host is not listed
  bool environment_ignored = false;   // setuid/setgid process: env variables not read
};

}  // namespace blobrt

#endif  // BLOBRT_PLUGIN_REPORT_HPP
