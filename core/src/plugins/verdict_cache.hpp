// What earlier child probes decided, remembered per plugin (as GStreamer's registry
// cache): a second program start, or a second `blobrt info`, does not start the scanner
// again for a plugin whose manifest and library are the same files, unchanged.
//
// A verdict is keyed by the manifest's and the library's path, inode, size and mtime. It
// keeps a plugin out only for what its code did (crashed, exited or hung when probed);
// the devices themselves are always asked again when the plugin is loaded, and a plugin
// that answered but was unusable (a device that would not open, a missing dependency) is
// probed again: the cause may lie outside the files the key sees (child_probe.cpp).
// The file is ${XDG_CACHE_HOME:-$HOME/.cache}/blobrt/plugin-verdicts. BLOBRT_PLUGIN_CACHE
// says how it is used: "on" (default), "off" (neither read nor written), "refresh"
// (not read, rewritten: `blobrt info --rescan`). A setuid process uses none.
#ifndef BLOBRT_VERDICT_CACHE_HPP
#define BLOBRT_VERDICT_CACHE_HPP

#include <map>
#include <optional>
#include <string>

namespace blobrt {

// A child probe's answer.
struct ProbeVerdict {
  bool usable = false;     // the plugin loaded, answered and opened its devices
  bool answered = false;   // the plugin's code ran to a complete answer (usable or not)
  int devices = 0;         // how many devices it reported
  std::string reason;      // why not usable (or why it has no device)
};

class VerdictCache {
 public:
  // Reads the cache file if the settings allow (a missing or unreadable one is empty).
  static VerdictCache open();

  std::optional<ProbeVerdict> find(const std::string& manifest, const std::string& library) const;
  void remember(const std::string& manifest, const std::string& library, const ProbeVerdict& verdict);
  // Writes the file (atomically) if anything was remembered; failures are logged only.
  void save() const;
  // The file, for messages ("" when no cache is used).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool changed_ = false;
  std::map<std::string, std::string> entries_;  // key (both files' identities) -> verdict fields
};

}  // namespace blobrt

#endif
