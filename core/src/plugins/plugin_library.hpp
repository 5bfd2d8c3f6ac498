// Loading one plugin's library into this process: the manifest's ABI, the library file and
// its `requires` libraries are checked before dlopen (RTLD_NOW, RTLD_NODELETE), then the
// entry point and the function table. The scanner does it to probe a plugin; the runtime
// does it only when one of the plugin's devices is first opened (runtime.cpp), so that a
// process maps no plugin it does not use. Nothing here throws: a failure is a reason.
#ifndef BLOBRT_PLUGIN_LIBRARY_HPP
#define BLOBRT_PLUGIN_LIBRARY_HPP

#include <memory>
#include <string>
#include <vector>

#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_report.hpp"
#include "manifest.hpp"
#include "verdict_cache.hpp"

namespace blobrt {

// A plugin the inventory lists, loaded or not yet.
struct LoadedPlugin {
  Manifest manifest;                        // what loading it checks (ABI, requires, name)
  std::shared_ptr<void> library;            // the boost::dll::shared_library, once loaded
  const blobrt_plugin_v1* table = nullptr;  // null unless loaded and past every check
  std::string error;                        // why a load on demand failed ("" if none was tried)
  // For each of the manifest's `requires`, the file the probe had loaded under that name
  // ("" when it had none): where a node's CUDA runtime really came from (pip's or the
  // system's), as `blobrt info` shows it.
  std::vector<std::string> required_files;
};

// Why a plugin whose manifest declares another ABI major is not loaded.
std::string abi_mismatch(const PluginReport& report);

// Every shared object loaded in this process now, by absolute path (dl_iterate_phdr).
std::vector<std::string> loaded_objects();

// For each name in REQUIRED, the object in OBJECTS with that file name ("" if none).
std::vector<std::string> files_loaded_as(const std::vector<std::string>& required,
                                         const std::vector<std::string>& objects);

// Loads report.library for `loaded.manifest`: kUsable when loaded.table is set (and
// report.library_version), else kNotLoadable with report.reason.
ProbeStatus load_library(PluginReport& report, LoadedPlugin& loaded);

// Asks a loaded plugin for its devices (count, every description) and opens and closes
// each, as a probe does. Fills report.devices, report.usable and report.reason.
ProbeStatus probe_devices(const LoadedPlugin& loaded, PluginReport& report);

// The runtime's side: loads the plugin of `report` (a usable one from the inventory) if it
// is not loaded yet, and checks that it still has the devices the probe listed. "" when
// loaded.table may be used, else why not (kept: it is not tried again).
std::string load_on_demand(LoadedPlugin& loaded, const PluginReport& report);

}  // namespace blobrt

#endif
