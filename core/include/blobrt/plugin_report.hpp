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

// One manifest the loader read, and its verdict.
struct PluginReport {
  std::string name;              // backend name from the manifest ("" if unreadable)
  std::string manifest;          // path of the manifest file
  std::string library;           // path of the shared object it names
  std::string abi;               // ABI the manifest declares, "major.minor"
  int priority = 0;
  std::vector<std::string> required_libraries;  // the manifest's `requires`: shared libraries it needs
  bool fork_safe = false;        // its devices stay usable in a fork()ed child (manifest)
  std::string library_version;   // from the loaded table, when it got that far
  bool usable = false;           // loaded and has at least one device
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
