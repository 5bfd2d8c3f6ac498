// What `blobrt info --json` prints and Python's blobrt.info() / devices() return: one
// description of this node, with the same keys in both (docs/blobrt-info.schema.json).
#ifndef BLOBRT_TOOLS_INFO_REPORT_HPP
#define BLOBRT_TOOLS_INFO_REPORT_HPP

#include "blobrt/device.hpp"
#include "json_out.hpp"

namespace blobrt::tools {

// Bumped when a key is removed or changes meaning; adding keys keeps it.
// 2: "scale_out" renamed "dist". 3: the selection's codes are the runtime's
// (blobrt::SkipCode; "unusable" and "other" are gone), with "requested", "origin" and
// each skip's "device".
constexpr int kInfoSchemaVersion = 3;

// {"id", "backend", "index", "name", "details", "type", "memory_bytes", "memory_model",
//  "supports_fp64", "has_pinned_host"}: the keys of Python's blobrt.devices().
json device_report(const DeviceDescription& d);

// The whole description: version, search path, every plugin (the built-in host first, with
// the same keys as the others: null where a value does not apply), the structured
// selection, the active device and libblobrt-dist's part (null without it).
// Selecting the default device may fail: then "active" is null and "selection"."error"
// says why. Never throws for that.
json info_report();

}  // namespace blobrt::tools

#endif
