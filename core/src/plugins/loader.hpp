// Plugin discovery: the search path, manifests, dependency and ABI checks, loading with
// Boost.DLL, and the probe of each table's devices. Every failure becomes a reason in
// the plugin's report; nothing here throws or aborts.
#ifndef BLOBRT_LOADER_HPP
#define BLOBRT_LOADER_HPP

#include <memory>
#include <vector>

#include "blobrt/plugin_abi.h"
#include "blobrt/runtime.hpp"

namespace blobrt {

struct LoadedPlugin {
  std::shared_ptr<void> library;          // the boost::dll::shared_library, kept loaded
  const blobrt_plugin_v1* table = nullptr;  // null unless the plugin got past every check
};

struct Discovery {
  Inventory inventory;
  std::vector<LoadedPlugin> loaded;  // one per inventory.plugins entry
};

// The directories to search, in order (BLOBRT_PLUGIN_PATH, then the system path).
std::vector<SearchDirectory> plugin_search_path();

Discovery discover_plugins();

// Parses one manifest and loads its plugin in this process, with every check but the
// search-path ones (blobrt-plugin-scanner runs this in the child process).
PluginReport probe_in_process(const std::string& manifest_path, LoadedPlugin* loaded = nullptr);

// Why PATH must not be trusted ("" if it may): writable by every user, by a group other
// than the caller's, or owned by a user other than root and the caller.
std::string insecure_reason(const std::string& path);

}  // namespace blobrt

#endif
