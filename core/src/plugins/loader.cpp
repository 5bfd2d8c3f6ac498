#include "loader.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "blobrt/error.hpp"
#include "blobrt/plugin_abi.h"
#include "blobrt/environment.hpp"
#include "log.hpp"
#include "child_probe.hpp"
#include "manifest.hpp"
#include "plugin_text.hpp"
#include "search_path.hpp"

namespace blobrt {
namespace fs = std::filesystem;

namespace {

// Parses a manifest file and copies what it declares into the report.
Manifest read_manifest(const fs::path& path, PluginReport& report) {
  Manifest manifest = parse_manifest(read_manifest_file(path.string()));
  report.name = manifest.name;
  report.library = (path.parent_path() / manifest.library).string();
  report.abi = std::to_string(manifest.abi_major) + "." + std::to_string(manifest.abi_minor);
  report.priority = manifest.priority;
  report.required_libraries = manifest.required_libraries;
  report.fork_safe = manifest.fork_safe;
  report.accelerator = manifest.accelerator;
  return manifest;
}

// A verdict from the cache or the scanner, as the report shows it.
void apply(const ProbeVerdict& verdict, const std::string& remembered_from, PluginReport& report) {
  report.usable = verdict.usable();
  report.status = verdict.status;
  report.library_version = verdict.library_version;
  report.devices = verdict.devices;
  for (DeviceDescription& device : report.devices) device.backend = report.name;
  report.reason = verdict.usable() ? "" : verdict.reason;
  if (!report.usable && report.reason.empty()) report.reason = "not usable (the plugin scanner gave no reason)";
  if (!report.usable && !remembered_from.empty()) {
    report.reason += " (remembered from an earlier probe in " + remembered_from +
                     "; `blobrt info --rescan` or BLOBRT_PLUGIN_CACHE=refresh probes again)";
  }
}

// The one probe body, in the scanner's child and in process alike: the manifest read, then
// the library loaded and its devices asked for, opened and closed.
void probe_here(PluginReport& report, InProcessProbe& probe) {
  probe.status = load_library(report, probe.loaded);
  if (probe.status == ProbeStatus::kUsable) probe.status = probe_devices(probe.loaded, report);
  report.usable = probe.status == ProbeStatus::kUsable;
  report.status = probe.status;
}

}  // namespace

InProcessProbe probe_in_process(const std::string& manifest_path) {
  InProcessProbe probe;
  probe.report.manifest = manifest_path;
  try {
    probe.loaded.manifest = read_manifest(manifest_path, probe.report);
  } catch (const std::exception& e) {
    probe.report.reason = "invalid manifest: " + std::string(e.what());
    probe.report.status = PluginStatus::kInvalidManifest;
    return probe;
  }
  probe_here(probe.report, probe);
  return probe;
}

namespace {

// The checks of the search path (trust, shadowing), then the verdict: from the cache or
// the scanner without loading the plugin, or probed here when no scanner is used.
void admit(PluginReport& report, LoadedPlugin& loaded, std::map<std::string, std::string>& claimed,
           VerdictCache& verdicts) {
  const Manifest& manifest = loaded.manifest;
  std::string unsafe;
  if (!insecure_allowed()) {
    unsafe = insecure_reason(report.manifest);
    if (unsafe.empty()) unsafe = insecure_reason(report.library);
  }
  if (!unsafe.empty()) {
    report.reason = insecure_refusal(unsafe);
    report.status = PluginStatus::kRefused;
    return;
  }
  // A plugin of another ABI major is never loaded, so it does not take its name from a
  // provider of this major later in the path (a newer blobrt's wheel beside this one's .deb).
  if (manifest.abi_major != BLOBRT_PLUGIN_ABI_MAJOR) {
    report.status = PluginStatus::kNotLoadable;
    report.reason = abi_mismatch(report);
    return;
  }
  if (claimed.count(manifest.name)) {
    report.status = manifest.name == "host" ? PluginStatus::kReservedName : PluginStatus::kShadowed;
    report.reason = manifest.name == "host"
                        ? std::string("the name 'host' is reserved for the built-in device")
                        : "shadowed by " + claimed[manifest.name] + " (earlier in the search path)";
    return;
  }
  claimed[manifest.name] = report.manifest;
  // Plugin code runs first in a child process with a time limit, so a plugin that crashes,
  // exits or hangs while probed costs this process nothing; its answer is the report.
  if (std::optional<ChildVerdict> child = probe_in_child(report, manifest, verdicts)) {
    apply(child->verdict, child->remembered_from, report);
    loaded.required_files = files_loaded_as(manifest.required_libraries, child->verdict.objects);
    return;
  }
  InProcessProbe probe;
  probe.loaded.manifest = manifest;
  probe_here(report, probe);
  loaded = std::move(probe.loaded);
  loaded.required_files = files_loaded_as(manifest.required_libraries, loaded_objects());
}

}  // namespace

Discovery discover_plugins() {
  Discovery discovery;
  discovery.inventory.environment_ignored = environment::ignored();
  // Before any plugin code can run here (blobrt/environment.hpp says why).
  environment::scrub_for_loaded_code();
  discovery.inventory.directories = plugin_search_path();
  // Backend names already taken, and by which manifest: the first in the path wins, and
  // the built-in device cannot be replaced.
  std::map<std::string, std::string> claimed = {{"host", ""}};
  VerdictCache verdicts = VerdictCache::open();

  for (const SearchDirectory& directory : discovery.inventory.directories) {
    log::debug("searching ", directory.path, " (", directory.origin, ")",
               directory.exists ? "" : ": no such directory");
    if (!directory.exists) continue;
    if (!directory.refused.empty()) {
      log::info("plugin directory ", directory.path, " ", directory.refused);
      continue;
    }
    std::vector<fs::path> manifests;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(directory.path, ec)) {
      if (entry.path().extension() == ".plugin") manifests.push_back(entry.path());
    }
    std::sort(manifests.begin(), manifests.end());
    for (const fs::path& path : manifests) {
      PluginReport report;
      LoadedPlugin loaded;
      report.manifest = path.string();
      try {
        loaded.manifest = read_manifest(path, report);
        admit(report, loaded, claimed, verdicts);
      } catch (const std::exception& e) {
        report.reason = "invalid manifest: " + std::string(e.what());
        report.status = PluginStatus::kInvalidManifest;
      }
      log::debug("plugin ", report.manifest, ": ",
                 report.usable ? "usable, " + std::to_string(report.devices.size()) + " device(s)"
                               : report.reason);
      discovery.inventory.plugins.push_back(std::move(report));
      discovery.loaded.push_back(std::move(loaded));
    }
  }
  verdicts.save();
  return discovery;
}

}  // namespace blobrt
