// What a plugin's C table offers, read one way by the loader (plugins/) and by the device
// that calls it (device/): this folder is the part of plugins/ that both layers see.
#ifndef BLOBRT_PLUGIN_TABLE_HPP
#define BLOBRT_PLUGIN_TABLE_HPP

#include "blobrt/plugin_abi.h"

namespace blobrt {

// Views (ABI 1.1): the plugin makes sub-buffer handles itself only when it has both entries;
// otherwise Device::view makes them where handles are addresses, and refuses elsewhere.
inline bool has_views(const blobrt_plugin_v1* table) noexcept {
  return BLOBRT_PLUGIN_OFFERS(table, view) && BLOBRT_PLUGIN_OFFERS(table, release_view);
}

}  // namespace blobrt

#endif
