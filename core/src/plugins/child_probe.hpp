// Probing a plugin in a child process first (as GStreamer's gst-plugin-scanner does): a
// plugin that crashes, exits or hangs while loaded, asked for its devices or opening them
// is reported, and never takes the calling process down.
//
// The protocol: libblobrt starts `blobrt-plugin-scanner --answer-fd 3 MANIFEST` with a
// private pipe as fd 3 (a plugin's own prints on stdout and stderr go to a second pipe,
// of which the last kPlainTail bytes are kept for the message). The answer is
//   blobrt-plugin-scanner protocol=1
//   usable=0|1
//   devices=N
//   reason=TEXT
//   object=PATH      (one line per shared object loaded in the scanner, for the cache)
//   end
// and the child is waited for under one deadline (BLOBRT_PLUGIN_PROBE_TIMEOUT seconds,
// default 30), then killed. A scanner speaking another protocol is not trusted: the
// plugin is then probed in process, as when no scanner is installed. Verdicts are
// remembered across runs (verdict_cache.hpp).
#ifndef BLOBRT_CHILD_PROBE_HPP
#define BLOBRT_CHILD_PROBE_HPP

#include <string>
#include <vector>

#include "blobrt/runtime.hpp"
#include "manifest.hpp"
#include "verdict_cache.hpp"

namespace blobrt {

inline constexpr int kScannerProtocol = 2;

// Probes report.manifest (whose library is report.library) in the scanner, or takes the
// cached verdict. Returns true if the plugin may be loaded here (the child found it
// usable or with no device, or no scanner can be used: then it is probed in process, as
// BLOBRT_PLUGIN_PROBE=inprocess asks); otherwise report.reason says why not.
// `manifest` is the plugin's, for what its verdict depends on.
bool probe_in_child(PluginReport& report, const Manifest& manifest, VerdictCache& cache);

// The scanner's side: the answer above for `report`, with the shared objects it had loaded.
std::string encode_probe_result(const PluginReport& report, const std::vector<std::string>& objects);

}  // namespace blobrt

#endif
