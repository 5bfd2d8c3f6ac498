// Probing a plugin in a child process first (as GStreamer's gst-plugin-scanner does): a
// plugin that crashes, exits or hangs while loaded, asked for its devices or opening them
// is reported, and never takes the calling process down.
//
// The protocol: libblobrt starts `blobrt-plugin-scanner --answer-fd 3 MANIFEST` with a
// private pipe as fd 3 (a plugin's own prints on stdout and stderr go to a second pipe,
// of which the last kOutputTail bytes are kept for the message). The answer is
//   blobrt-plugin-scanner protocol=5
//   status=usable|no_device|will_not_open|not_loadable|init_failed   (verdict_cache.hpp)
//   library_version=TEXT
//   reason=TEXT      (why not usable, or why it has no device; one line)
//   device=FIELDS    (one line per device, every DeviceDescription field: device_record.hpp)
//   object=PATH      (one line per shared object loaded in the scanner, for the cache)
//   end
// and the child is waited for under one deadline (BLOBRT_PLUGIN_PROBE_TIMEOUT seconds,
// default 30), then killed. A scanner speaking another protocol is not trusted: the
// plugin is then probed in process, as when no scanner is installed. The answer is the
// inventory's entry for the plugin: the plugin is not loaded to ask again. Verdicts are
// remembered across runs (verdict_cache.hpp).
#ifndef BLOBRT_CHILD_PROBE_HPP
#define BLOBRT_CHILD_PROBE_HPP

#include <optional>
#include <string>
#include <vector>

#include "blobrt/plugin_report.hpp"
#include "manifest.hpp"
#include "verdict_cache.hpp"

namespace blobrt {

inline constexpr int kScannerProtocol = 5;

// A verdict from the scanner or the cache; remembered_from names the cache file when it
// came from there.
struct ChildVerdict {
  ProbeVerdict verdict;
  std::string remembered_from;
};

// The verdict on report.manifest (whose library is report.library): the cached one if it
// still holds, else the scanner's. nullopt when the plugin is to be probed in this process
// instead (BLOBRT_PLUGIN_PROBE=inprocess, no scanner, a scanner of another protocol).
// `manifest` is the plugin's, for what its verdict depends on.
std::optional<ChildVerdict> probe_in_child(const PluginReport& report, const Manifest& manifest, VerdictCache& cache);

// The scanner's side: the answer above.
std::string encode_probe_result(const ProbeVerdict& verdict);
// libblobrt's side: a complete answer's fields (greeting and `end` already checked);
// nullopt if a status or device line is malformed.
std::optional<ProbeVerdict> decode_probe_result(const std::string& answer);

}  // namespace blobrt

#endif
