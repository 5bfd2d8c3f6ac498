#include "plugin_library.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <system_error>

#include <dlfcn.h>
#include <link.h>

#include <boost/dll/shared_library.hpp>

#include "blobrt/environment.hpp"
#include "blobrt/plugin_kit.hpp"  // plugin_kit::detail::kRequired_*: what REQUIRED/OPTIONAL mean
#include "log.hpp"
#include "search_path.hpp"
#include "plugin_table.hpp"
#include "plugin_text.hpp"

namespace blobrt {
namespace fs = std::filesystem;

namespace {

// Makes a dlopen message say what a user needs to know.
std::string explain_load_error(const std::string& what) {
  std::string message = what;
  const std::string marker = "(dlerror system message: ";
  auto at = message.find(marker);
  if (at != std::string::npos) {
    // Boost.DLL writes "... failed (dlerror system message: TEXT): ERROR CODE'S TEXT", the
    // code's text being its own ("Bad file descriptor" for any failed dlopen): TEXT alone.
    message = message.substr(at + marker.size());
    const auto code_text = message.rfind("): ");
    if (code_text != std::string::npos) {
      message.erase(code_text);
    } else if (!message.empty() && message.back() == ')') {
      message.pop_back();
    }
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

// The first REQUIRED entry (plugin_abi.h's list) the table leaves NULL, or nullptr. Every
// required entry is in 1.0, which check_table has made sure the table covers.
const char* missing_required(const blobrt_plugin_v1* table) {
#define BLOBRT_CHECK_REQUIRED_(presence, since, return_type, name, parameters) \
  if (plugin_kit::detail::kRequired_##presence && !table->name) return #name;
  BLOBRT_PLUGIN_V1_ENTRIES(BLOBRT_CHECK_REQUIRED_)
#undef BLOBRT_CHECK_REQUIRED_
  return nullptr;
}

std::string check_table(const blobrt_plugin_v1* table, const Manifest& manifest) {
  if (!table) return "entry point returned no table for ABI major " +
                     std::to_string(BLOBRT_PLUGIN_ABI_MAJOR);
  if (table->struct_size < BLOBRT_PLUGIN_V1_0_SIZE) {
    return "function table struct_size " + std::to_string(table->struct_size) +
           " is smaller than the " + std::to_string(BLOBRT_PLUGIN_V1_0_SIZE) + " bytes of ABI 1.0";
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
  if (const char* missing = missing_required(table)) {
    return std::string("function table lacks required operation '") + missing + "'";
  }
  return "";
}

DeviceDescription describe(const PluginReport& report, int index,
                           const blobrt_device_properties& p, bool table_has_alias,
                           bool table_has_views) {
  DeviceDescription d;
  d.backend = report.name;
  d.index = index;
  // On one line, as the scanner answers and the cache keeps them (device_record.hpp).
  d.name = one_line(plugin_text(p.name, sizeof p.name));
  d.details = one_line(plugin_text(p.details, sizeof p.details));
  d.memory_bytes = p.memory_bytes;
  d.kind = p.kind == BLOBRT_DEVICE_KIND_GPU           ? DeviceKind::kGpu
           : p.kind == BLOBRT_DEVICE_KIND_ACCELERATOR ? DeviceKind::kAccelerator
                                                      : DeviceKind::kCpu;
  // ABI 1.x says the memory model with two flags; the core keeps one value.
  d.memory_model = p.host_memory ? MemoryModel::kShared
                   : p.host_alias_buffers && table_has_alias ? MemoryModel::kAliased
                                                             : MemoryModel::kSeparate;
  d.supports_fp64 = p.supports_fp64 != 0;
  d.has_pinned_host = p.has_pinned_host != 0;
  // ABI 1.3: native type and handle arithmetic. An older plugin (or one that does not say)
  // leaves them 0; host-pointer handles are then CPU memory that pointer arithmetic works on.
  const bool says_native = BLOBRT_STRUCT_HAS(blobrt_device_properties, &p, native_type) &&
                           p.native_type != BLOBRT_NATIVE_UNKNOWN;
  const bool host_pointers = d.memory_model == MemoryModel::kShared;
  d.native_type = says_native ? static_cast<NativeDeviceType>(p.native_type)
                  : host_pointers ? NativeDeviceType::kCpu
                                  : NativeDeviceType::kUnknown;
  d.native_index = says_native && BLOBRT_STRUCT_HAS(blobrt_device_properties, &p, native_index) ? std::max(p.native_index, 0) : 0;
  d.addressable_handles = host_pointers || (BLOBRT_STRUCT_HAS(blobrt_device_properties, &p, addressable_handles) &&
                                            p.addressable_handles != 0);
  // Views (ABI 1.1): where the plugin offers them, at its alignment; on host-memory
  // devices the core makes them itself (pointer arithmetic), cache-line aligned.
  if (table_has_views && BLOBRT_STRUCT_HAS(blobrt_device_properties, &p, view_alignment)) {
    d.view_alignment = p.view_alignment ? static_cast<std::size_t>(p.view_alignment) : 1;
  } else if (host_pointers) {
    d.view_alignment = 64;
  }
  return d;
}

std::string message_of(const blobrt_error& err) { return plugin_message(err, "no reason given"); }

// Loads a library the manifest requires, as the plugin will find it: from the manifest's
// `library_path` (where a plugin wheel's RUNPATH points: pip's NVIDIA libraries), else the
// system's search. "" when it loads, else why not.
std::string load_required(const std::string& name, const std::vector<std::string>& library_path) {
  constexpr auto mode = boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local;
  for (const std::string& directory : library_path) {
    const fs::path candidate = fs::path(directory) / name;
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) continue;
    // The same trust rule as for plugins: a file another user could have put there is not
    // loaded (its constructors would run here).
    if (!insecure_allowed()) {
      const std::string unsafe = insecure_reason(candidate.string());
      if (!unsafe.empty()) return insecure_refusal(unsafe);
    }
    try {
      boost::dll::shared_library probe(candidate.string(), mode);
      return "";
    } catch (const std::exception& e) {
      return candidate.string() + ": " + explain_load_error(e.what());
    }
  }
  try {
    boost::dll::shared_library probe(name, mode | boost::dll::load_mode::search_system_folders);
    return "";
  } catch (const std::exception& e) {
    return explain_load_error(e.what()) + (library_path.empty() ? "" : ", nor in the manifest's library_path");
  }
}

}  // namespace

std::vector<std::string> loaded_objects() {
  std::vector<std::string> objects;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && info->dlpi_name[0] == '/') {
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &objects);
  return objects;
}

std::vector<std::string> files_loaded_as(const std::vector<std::string>& required,
                                         const std::vector<std::string>& objects) {
  std::vector<std::string> files;
  for (const std::string& name : required) {
    auto found = std::find_if(objects.begin(), objects.end(),
                              [&](const std::string& object) { return fs::path(object).filename() == name; });
    // As opened: a RUNPATH of $ORIGIN/../.. gives .../cuda13/../../nvidia/...; shown normalised.
    files.push_back(found == objects.end() ? "" : fs::path(*found).lexically_normal().string());
  }
  return files;
}

std::string abi_mismatch(const PluginReport& report) {
  return "manifest declares ABI " + report.abi + ", this blobrt speaks " + std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) +
         "." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR) + " (not loaded)";
}

ProbeStatus load_library(PluginReport& report, LoadedPlugin& loaded) {
  const Manifest& manifest = loaded.manifest;
  loaded.table = nullptr;
  if (manifest.abi_major != BLOBRT_PLUGIN_ABI_MAJOR) {
    report.reason = abi_mismatch(report);
    return ProbeStatus::kNotLoadable;
  }
  std::error_code ec;
  if (!fs::is_regular_file(report.library, ec)) {
    report.reason = "library file not found: " + report.library;
    return ProbeStatus::kNotLoadable;
  }
  // A setuid/setgid process searches only the system's folders (as the dynamic linker
  // ignores a $ORIGIN RUNPATH there).
  const std::vector<std::string> library_path =
      environment::ignored() ? std::vector<std::string>{}
                             : library_path_directories(manifest, fs::path(report.library).parent_path().string());
  for (const std::string& dependency : manifest.required_libraries) {
    std::string why = load_required(dependency, library_path);
    if (!why.empty()) {
      report.reason = "missing dependency " + dependency + " (required by the manifest; " + why + ")";
      return ProbeStatus::kNotLoadable;
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
    return ProbeStatus::kNotLoadable;
  }
  if (!library->has(BLOBRT_PLUGIN_ENTRY_SYMBOL)) {
    report.reason = std::string("no entry point ") + BLOBRT_PLUGIN_ENTRY_SYMBOL + " in " +
                    report.library;
    return ProbeStatus::kNotLoadable;
  }
  auto entry = library->get<const blobrt_plugin_v1*(std::uint32_t)>(BLOBRT_PLUGIN_ENTRY_SYMBOL);
  const blobrt_plugin_v1* table = entry(BLOBRT_PLUGIN_ABI_MAJOR);
  report.reason = check_table(table, manifest);
  if (!report.reason.empty()) return ProbeStatus::kNotLoadable;
  report.library_version = one_line(plugin_text(table->library_version, kMaxPluginString));
  loaded.library = library;
  loaded.table = table;
  return ProbeStatus::kUsable;
}

ProbeStatus probe_devices(const LoadedPlugin& loaded, PluginReport& report) {
  const blobrt_plugin_v1* table = loaded.table;
  report.devices.clear();
  report.usable = false;
  std::int32_t count = 0;
  blobrt_error err{};
  if (table->device_count(&count, &err) != BLOBRT_OK) {
    report.reason = "initialisation failed: " + message_of(err);
    return ProbeStatus::kInitFailed;
  }
  if (count <= 0) {
    report.reason = "0 devices: " + message_of(err);
    return ProbeStatus::kNoDevice;
  }
  for (std::int32_t i = 0; i < count; ++i) {
    blobrt_device_properties properties{};
    properties.struct_size = sizeof properties;
    blobrt_error perr{};
    if (table->device_properties(i, &properties, &perr) != BLOBRT_OK) {
      report.reason = "device " + std::to_string(i) + ": " + message_of(perr);
      report.devices.clear();
      return ProbeStatus::kInitFailed;
    }
    report.devices.push_back(describe(report, i, properties, table->host_alias != nullptr, has_views(table)));
  }
  // Each device is opened and closed once, as the runtime will: a device listed but busy
  // or refused is not usable (and a plugin that crashes here does so in the scanner).
  for (const DeviceDescription& device : report.devices) {
    void* context = nullptr;
    blobrt_error oerr{};
    if (table->open_device(device.index, &context, &oerr) != BLOBRT_OK) {
      report.reason = "device " + std::to_string(device.index) + " cannot be opened: " +
                      plugin_message(oerr, "no message from the plugin");
      return ProbeStatus::kWillNotOpen;
    }
    table->close_device(context);
  }
  report.reason.clear();
  report.usable = true;
  return ProbeStatus::kUsable;
}

std::string load_on_demand(LoadedPlugin& loaded, const PluginReport& report) {
  if (loaded.table || !loaded.error.empty()) return loaded.error;
  PluginReport scratch = report;
  if (load_library(scratch, loaded) != ProbeStatus::kUsable) {
    loaded.error = "usable when probed, but cannot be loaded now: " + scratch.reason;
    return loaded.error;
  }
  std::int32_t count = 0;
  blobrt_error err{};
  std::string why;
  if (loaded.table->device_count(&count, &err) != BLOBRT_OK) {
    why = "usable when probed, but initialisation failed now: " + message_of(err);
  } else if (count != static_cast<std::int32_t>(report.devices.size())) {
    why = "the plugin reports " + std::to_string(count) + " device(s) now, " +
          std::to_string(report.devices.size()) +
          " when probed (`blobrt info --rescan` or BLOBRT_PLUGIN_CACHE=refresh probes again)";
  }
  if (!why.empty()) {
    loaded.table = nullptr;  // the library stays mapped (RTLD_NODELETE), never called again
    loaded.error = why;
    return why;
  }
  log::debug("plugin ", report.manifest, ": loaded on demand (", report.library, ")");
  return "";
}

}  // namespace blobrt
