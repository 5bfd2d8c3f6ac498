// Plugin discovery: over the search path (search_path.hpp), each manifest (manifest.hpp)
// is read and checked, then its verdict is taken from the cache or the scanner
// (child_probe.hpp), whose answer describes every device: the inventory is built without
// loading any plugin here. A plugin is loaded when one of its devices is first opened
// (plugin_library.hpp, load_on_demand). With no scanner, or BLOBRT_PLUGIN_PROBE=inprocess,
// each plugin is probed in this process instead (and stays loaded). Every failure becomes a
// reason in the plugin's report; nothing here throws or aborts.
#ifndef BLOBRT_LOADER_HPP
#define BLOBRT_LOADER_HPP

#include <string>
#include <vector>

#include "blobrt/plugin_report.hpp"
#include "plugin_library.hpp"
#include "search_path.hpp"
#include "verdict_cache.hpp"

namespace blobrt {

struct Discovery {
  Inventory inventory;
  std::vector<LoadedPlugin> loaded;  // one per inventory.plugins entry; loaded on demand
};

Discovery discover_plugins();

// One plugin probed in this process: its manifest parsed, its library loaded, its devices
// described and each opened and closed, with every check but the search-path ones (the
// scanner runs this in its child process).
struct InProcessProbe {
  PluginReport report;
  ProbeStatus status = ProbeStatus::kNotLoadable;
  LoadedPlugin loaded;
};
InProcessProbe probe_in_process(const std::string& manifest_path);

}  // namespace blobrt

#endif
