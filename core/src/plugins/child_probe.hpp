// Probing a plugin in a child process first (as GStreamer's gst-plugin-scanner does): a
// plugin that crashes or hangs while loaded or asked for its devices is reported, and
// never takes the calling process down.
#ifndef BLOBRT_CHILD_PROBE_HPP
#define BLOBRT_CHILD_PROBE_HPP

#include <string>

#include "blobrt/runtime.hpp"

namespace blobrt {

// Runs blobrt-plugin-scanner on report.manifest. Returns true if the plugin may be loaded
// here (the child found it usable, or no scanner is available: then it is probed in
// process, as BLOBRT_PLUGIN_PROBE=inprocess asks); otherwise report.reason says why not.
// The time limit is BLOBRT_PLUGIN_PROBE_TIMEOUT seconds (default 30).
bool probe_in_child(PluginReport& report);

// The scanner's side of the protocol: one line "usable=0|1", one line "reason=TEXT".
std::string encode_probe_result(const PluginReport& report);

}  // namespace blobrt

#endif
