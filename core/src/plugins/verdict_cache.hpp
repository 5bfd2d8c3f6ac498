// What earlier child probes decided, remembered per plugin (as GStreamer's registry
// cache): a second program start, or a second `blobrt info`, does not start the scanner
// again for a plugin whose files, and what its verdict depends on, are unchanged.
//
// The cache may make a start faster, never less safe: a remembered verdict holds only
// while each of these is what it was when the plugin was probed (a plugin that was fine
// then but would crash now is probed again in the child, never loaded here on trust):
//  - the manifest and the library: path, device, inode, size, mtime and ctime (ctime
//    catches a file rewritten in place with its old size and mtime, as `cp -p` leaves it);
//  - every shared object the scanner had loaded when it answered (the plugin's BLAS, an
//    OpenCL ICD, a GPU driver), by the same identity: a driver upgrade is a new probe;
//  - what the manifest declares its devices depend on (verdict_cache_key below):
//    `depends_on_files` (files or directories, e.g. /etc/OpenCL/vendors, whose entries
//    count too) and `depends_on_env` (variable names, NAME* for a prefix).
// An entry keeps the probe's whole answer (status, library version, every device's
// description), so that the inventory is built from it without loading the plugin. A
// verdict holds for what the plugin's code did (crashed, exited or hung when probed) and
// for "usable" and "no device"; a plugin that answered but was unusable otherwise (a
// device that would not open, a missing dependency) is probed again: the cause may lie
// outside what the key sees (child_probe.cpp). The file is ${XDG_CACHE_HOME:-$HOME/.cache}/blobrt/plugin-verdicts,
// read only when no other user could have written it (search_path.hpp's trust check).
// BLOBRT_PLUGIN_CACHE says how it is used: "on" (default), "off" (neither read nor
// written), "refresh" (not read, rewritten: `blobrt info --rescan`). A setuid process uses
// none.
#ifndef BLOBRT_VERDICT_CACHE_HPP
#define BLOBRT_VERDICT_CACHE_HPP

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "blobrt/device.hpp"
#include "blobrt/plugin_report.hpp"

namespace blobrt {

// What a probe found, as the scanner answers it (`status=`, child_probe.hpp) and the cache
// keeps it: a PluginStatus, spelled as everywhere (to_string, plugin_status.cpp), and only
// one a probe can give: usable, no_device, will_not_open, not_loadable, init_failed, and
// no_answer (crashed, exited or hung: never loaded here). The plugin's code ran to an
// answer for every one but no_answer.
using ProbeStatus = PluginStatus;
std::optional<ProbeStatus> parse_probe_status(const std::string& text);

// A probe's answer: everything the inventory shows of a plugin, so that it is built without
// loading the plugin (the runtime loads it when one of its devices is opened).
struct ProbeVerdict {
  ProbeStatus status = ProbeStatus::kNoAnswer;
  std::string library_version;               // from the plugin's table
  std::vector<DeviceDescription> devices;    // every field; backend is the manifest's name
  std::string reason;                        // why not usable (or why it has no device)
  std::vector<std::string> objects;  // absolute paths of the shared objects the scanner had loaded
  bool usable() const { return status == ProbeStatus::kUsable; }
};

// Which plugin a verdict is for, and what it depends on besides its own files.
struct VerdictSubject {
  std::string manifest;
  std::string library;
  std::vector<std::string> depends_on_files;
  std::vector<std::string> depends_on_env;
};

class VerdictCache {
 public:
  // Reads the cache file if the settings allow (a missing or unreadable one is empty).
  static VerdictCache open();

  // The remembered verdict, if every identity it was keyed by still holds.
  std::optional<ProbeVerdict> find(const VerdictSubject& subject) const;
  // Remembers a verdict, replacing any other for the same manifest path.
  void remember(const VerdictSubject& subject, const ProbeVerdict& verdict);
  // Writes the file (atomically) if anything was remembered; failures are logged only.
  void save() const;
  // The file, for messages ("" when no cache is used).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool changed_ = false;
  std::map<std::string, std::string> entries_;  // manifest path -> "key\tverdict fields"
};

}  // namespace blobrt

#endif
