// Plugin discovery: over the search path (search_path.hpp), each manifest
// (manifest.hpp) is probed in the scanner (child_probe.hpp), then its dependencies and
// ABI are checked, it is loaded with Boost.DLL and its devices are asked for. Every
// failure becomes a reason in the plugin's report; nothing here throws or aborts.
#ifndef BLOBRT_LOADER_HPP
#define BLOBRT_LOADER_HPP

#include <memory>
#include <vector>

#include "blobrt/plugin_abi.h"
#include "blobrt/runtime.hpp"
#include "search_path.hpp"

namespace blobrt {

struct LoadedPlugin {
  std::shared_ptr<void> library;          // the boost::dll::shared_library, kept loaded
  const blobrt_plugin_v1* table = nullptr;  // null unless the plugin got past every check
};

struct Discovery {
  Inventory inventory;
  std::vector<LoadedPlugin> loaded;  // one per inventory.plugins entry
};

Discovery discover_plugins();

// Parses one manifest and loads its plugin in this process, with every check but the
// search-path ones (blobrt-plugin-scanner runs this in the child process).
PluginReport probe_in_process(const std::string& manifest_path, LoadedPlugin* loaded = nullptr);

}  // namespace blobrt

#endif
