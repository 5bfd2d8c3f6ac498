#include "loader.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>

#include "blobrt/error.hpp"
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
  report.requires = manifest.requires;
  report.fork_safe = manifest.fork_safe;
  return manifest;
}

// Makes a dlopen message say what a user needs to know.
std::string explain_load_error(const std::string& what) {
  std::string message = what;
  const std::string marker = "(dlerror system message: ";
  auto at = message.find(marker);
  if (at != std::string::npos) {
    message = message.substr(at + marker.size());
    if (!message.empty() && message.back() == ')') message.pop_back();
  }
  auto missing = message.find(": cannot open shared object file");
  if (missing != std::string::npos) {
    std::string library = message.substr(0, missing);
    auto slash = library.rfind(": ");
    if (slash != std::string::npos) library = library.substr(slash + 2);
    return "missing dependency " + library + " (" + message + ")";
  }
  if (message.find("invalid ELF header") != std::string::npos ||
      message.find("file too short") != std::string::npos) {
    return "not a shared object (" + message + ")";
  }
  return "cannot load: " + message;
}

// The fields a v1.0 table must have, up to and including synchronize.
constexpr std::size_t kMinimumTableSize =
    offsetof(blobrt_plugin_v1, synchronize) + sizeof(blobrt_plugin_v1::synchronize);

bool has_views(const blobrt_plugin_v1* table) {
  return BLOBRT_STRUCT_HAS(blobrt_plugin_v1, table, release_view) && table->view && table->release_view;
}

std::string check_table(const blobrt_plugin_v1* table, const Manifest& manifest) {
  if (!table) return "entry point returned no table for ABI major " +
                     std::to_string(BLOBRT_PLUGIN_ABI_MAJOR);
  if (!BLOBRT_STRUCT_HAS(blobrt_plugin_v1, table, synchronize)) {
    return "function table struct_size " + std::to_string(table->struct_size) +
           " is smaller than the " + std::to_string(kMinimumTableSize) + " bytes of ABI 1.0";
  }
  if (table->abi_major != BLOBRT_PLUGIN_ABI_MAJOR) {
    return "function table reports ABI " + std::to_string(table->abi_major) + "." +
           std::to_string(table->abi_minor) + ", this blobrt speaks " +
           std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) + "." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR);
  }
  const std::string table_name = plugin_text(table->name, kMaxPluginString);
  if (!table->name || manifest.name != table_name) {
    return "function table names backend '" + (table->name ? table_name : std::string("(null)")) +
           "' but the manifest says '" + manifest.name + "'";
  }
  struct Required {
    const char* name;
    bool present;
  };
  const Required required[] = {
      {"device_count", table->device_count != nullptr},
      {"device_properties", table->device_properties != nullptr},
      {"open_device", table->open_device != nullptr},
      {"close_device", table->close_device != nullptr},
      {"allocate", table->allocate != nullptr},
      {"release", table->release != nullptr},
      {"copy_to_device", table->copy_to_device != nullptr},
      {"copy_to_host", table->copy_to_host != nullptr},
      {"copy_device", table->copy_device != nullptr},
      {"memset", table->memset != nullptr},
      {"saxpy", table->saxpy != nullptr},
      {"daxpy", table->daxpy != nullptr},
      {"sdot", table->sdot != nullptr},
      {"ddot", table->ddot != nullptr},
      {"sasum", table->sasum != nullptr},
      {"dasum", table->dasum != nullptr},
      {"sscal", table->sscal != nullptr},
      {"dscal", table->dscal != nullptr},
      {"synchronize", table->synchronize != nullptr},
  };
  for (const Required& r : required) {
    if (!r.present) return std::string("function table lacks required operation '") + r.name + "'";
  }
  return "";
}

DeviceDescription describe(const PluginReport& report, int index,
                           const blobrt_device_properties& p, bool table_has_alias,
                           bool table_has_views) {
  DeviceDescription d;
  d.backend = report.name;
  d.index = index;
  d.name = plugin_text(p.name, sizeof p.name);
  d.details = plugin_text(p.details, sizeof p.details);
  d.memory_bytes = p.memory_bytes;
  d.kind = p.kind == BLOBRT_DEVICE_KIND_GPU           ? DeviceKind::kGpu
           : p.kind == BLOBRT_DEVICE_KIND_ACCELERATOR ? DeviceKind::kAccelerator
                                                      : DeviceKind::kCpu;
  d.host_memory = p.host_memory != 0;
  d.supports_fp64 = p.supports_fp64 != 0;
  d.has_pinned_host = p.has_pinned_host != 0;
  d.host_alias_buffers = p.host_alias_buffers != 0 && table_has_alias;
  // Views (ABI 1.1): where the plugin offers them, at its alignment; on host-memory
  // devices the core makes them itself (pointer arithmetic), cache-line aligned.
  if (table_has_views && BLOBRT_STRUCT_HAS(blobrt_device_properties, &p, view_alignment)) {
    d.view_alignment = p.view_alignment ? static_cast<std::size_t>(p.view_alignment) : 1;
  } else if (d.host_memory) {
    d.view_alignment = 64;
  }
  return d;
}

std::string message_of(const blobrt_error& err) { return plugin_message(err, "no reason given"); }

// Loads one plugin whose manifest parsed; fills report.reason on failure.
LoadedPlugin load(const Manifest& manifest, PluginReport& report) {
  LoadedPlugin loaded;
  if (manifest.abi_major != BLOBRT_PLUGIN_ABI_MAJOR) {
    report.reason = "manifest declares ABI " + report.abi + ", this blobrt speaks " +
                    std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) + "." +
                    std::to_string(BLOBRT_PLUGIN_ABI_MINOR) + " (not loaded)";
    return loaded;
  }
  std::error_code ec;
  if (!fs::is_regular_file(report.library, ec)) {
    report.reason = "library file not found: " + report.library;
    return loaded;
  }
  for (const std::string& dependency : manifest.requires) {
    try {
      boost::dll::shared_library probe(dependency, boost::dll::load_mode::search_system_folders |
                                                       boost::dll::load_mode::rtld_lazy |
                                                       boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      report.reason = "missing dependency " + dependency + " (required by the manifest; " +
                      explain_load_error(e.what()) + ")";
      return loaded;
    }
  }
  auto library = std::make_shared<boost::dll::shared_library>();
  try {
    // RTLD_NODELETE: a plugin stays mapped until the process ends, as GPU runtimes expect
    // (unloading CUDA or an OpenCL ICD while the process runs on is a known source of
    // crashes at exit), and so its allocations can still be attributed by leak checkers.
    library->load(report.library, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                                      static_cast<boost::dll::load_mode::type>(RTLD_NODELETE));
  } catch (const std::exception& e) {
    report.reason = explain_load_error(e.what());
    return loaded;
  }
  if (!library->has(BLOBRT_PLUGIN_ENTRY_SYMBOL)) {
    report.reason = std::string("no entry point ") + BLOBRT_PLUGIN_ENTRY_SYMBOL + " in " +
                    report.library;
    return loaded;
  }
  auto entry = library->get<const blobrt_plugin_v1*(std::uint32_t)>(BLOBRT_PLUGIN_ENTRY_SYMBOL);
  const blobrt_plugin_v1* table = entry(BLOBRT_PLUGIN_ABI_MAJOR);
  report.reason = check_table(table, manifest);
  if (!report.reason.empty()) return loaded;
  report.library_version = plugin_text(table->library_version, kMaxPluginString);

  std::int32_t count = 0;
  blobrt_error err{};
  if (table->device_count(&count, &err) != BLOBRT_OK) {
    report.reason = "initialisation failed: " + message_of(err);
    return loaded;
  }
  if (count <= 0) {
    report.reason = "0 devices: " + message_of(err);
  }
  for (std::int32_t i = 0; i < count; ++i) {
    blobrt_device_properties properties{};
    properties.struct_size = sizeof properties;
    blobrt_error perr{};
    if (table->device_properties(i, &properties, &perr) != BLOBRT_OK) {
      report.reason = "device " + std::to_string(i) + ": " + message_of(perr);
      report.devices.clear();
      break;
    }
    report.devices.push_back(describe(report, i, properties, table->host_alias != nullptr, has_views(table)));
  }
  report.usable = report.reason.empty();
  loaded.library = library;
  loaded.table = table;
  return loaded;
}

}  // namespace

namespace {

// The one probe body, in the scanner's child and in process alike: read the manifest, let
// `admit` refuse it (it sets report.reason), then load the plugin and ask for its devices.
template <typename Admit>
LoadedPlugin probe(const std::string& manifest_path, PluginReport& report, Admit admit) {
  report.manifest = manifest_path;
  try {
    Manifest manifest = read_manifest(manifest_path, report);
    if (admit(manifest)) return load(manifest, report);
  } catch (const std::exception& e) {
    report.reason = "invalid manifest: " + std::string(e.what());
  }
  return {};
}

}  // namespace

PluginReport probe_in_process(const std::string& manifest_path, LoadedPlugin* loaded) {
  PluginReport report;
  LoadedPlugin result = probe(manifest_path, report, [](const Manifest&) { return true; });
  if (loaded) *loaded = result;
  return report;
}

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
      LoadedPlugin loaded = probe(path.string(), report, [&](const Manifest& manifest) {
        std::string unsafe;
        if (!insecure_allowed()) {
          unsafe = insecure_reason(report.manifest);
          if (unsafe.empty()) unsafe = insecure_reason(report.library);
        }
        if (!unsafe.empty()) {
          report.reason = insecure_refusal(unsafe);
          return false;
        }
        if (claimed.count(manifest.name)) {
          report.reason = manifest.name == "host"
                              ? std::string("the name 'host' is reserved for the built-in device")
                              : "shadowed by " + claimed[manifest.name] + " (earlier in the search path)";
          return false;
        }
        claimed[manifest.name] = report.manifest;
        // Plugin code runs first in a child process with a time limit, so a plugin that
        // crashes, exits or hangs while probed costs this process nothing.
        return probe_in_child(report, manifest, verdicts);
      });
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
