// The one spelling of a plugin's verdict code (blobrt/plugin_report.hpp): what `blobrt
// info --json` and the selection report write, the scanner answers and the verdict cache
// keeps (verdict_cache.hpp's ProbeStatus is this enum). snake_case, stable.
#include "blobrt/plugin_report.hpp"

namespace blobrt {

const char* to_string(PluginStatus status) noexcept {
  switch (status) {
    case PluginStatus::kUsable: return "usable";
    case PluginStatus::kRefused: return "refused";
    case PluginStatus::kInvalidManifest: return "invalid_manifest";
    case PluginStatus::kReservedName: return "reserved_name";
    case PluginStatus::kShadowed: return "shadowed";
    case PluginStatus::kNotLoadable: return "not_loadable";
    case PluginStatus::kInitFailed: return "init_failed";
    case PluginStatus::kNoDevice: return "no_device";
    case PluginStatus::kWillNotOpen: return "will_not_open";
    case PluginStatus::kNoAnswer: return "no_answer";
  }
  return "unknown";
}

}  // namespace blobrt
