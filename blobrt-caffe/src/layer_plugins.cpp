// Finding and loading Caffe-layers plugins (blobrt/caffe/portable/layer_plugin.hpp): the
// folders libcaffe names, the plugin file for a kind of device memory in each, its
// descriptor checked before anything of it runs, and the record of what became of each.
#include "blobrt/caffe/portable/layer_plugin.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <blobrt/log.hpp>

namespace blobrt_caffe_portable {
namespace {

struct Plugins {
  // The memory kinds looked for already, one bit per DLPack type: the GPU methods ask on
  // every call, and only the first may take the lock.
  std::atomic<std::uint64_t> looked_for_bits{0};
  std::mutex mutex;
  std::vector<std::string> folders;  // libcaffe's
  std::string caffe_build;           // libcaffe's build id; empty where no portable libcaffe is loaded
  std::map<std::string, std::string> outcomes;        // by file path: "loaded: ..." / "skipped: ...".
  std::vector<boost::dll::shared_library> libraries;  // kept loaded: their methods are registered
};

Plugins& plugins() {
  static Plugins* instance = new Plugins();  // never destroyed: layers may run during exit
  return *instance;
}

std::string file_name_for(blobrt::NativeDeviceType memory) {
  return std::string("libcaffe-layers-") + blobrt::to_string(memory) + ".so";
}

// Every folder to look in: the environment's first, then libcaffe's.
std::vector<std::string> search_folders(const Plugins& p) {
  std::vector<std::string> folders;
  if (const char* path = std::getenv("BLOBRT_CAFFE_LAYER_PLUGIN_PATH")) {
    std::stringstream list(path);
    std::string entry;
    while (std::getline(list, entry, ':')) {
      if (!entry.empty()) folders.push_back(entry);
    }
  }
  folders.insert(folders.end(), p.folders.begin(), p.folders.end());
  return folders;
}

// Loads and registers one plugin file; the outcome's text says how it went.
std::string load_one(Plugins& p, const std::string& path, blobrt::NativeDeviceType memory) {
  boost::dll::shared_library library;
  try {
    library.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& error) {
    return {std::string("skipped: cannot be loaded: ") + error.what()};
  }
  if (!library.has(BLOBRT_CAFFE_LAYER_PLUGIN_ENTRY)) {
    return {"skipped: not a Caffe-layers plugin (it exports no " BLOBRT_CAFFE_LAYER_PLUGIN_ENTRY ")"};
  }
  const blobrt_caffe_layer_plugin* descriptor =
      library.get<const blobrt_caffe_layer_plugin*()>(BLOBRT_CAFFE_LAYER_PLUGIN_ENTRY)();
  if (descriptor == nullptr || descriptor->struct_size < sizeof(blobrt_caffe_layer_plugin) ||
      descriptor->abi != BLOBRT_CAFFE_LAYER_PLUGIN_ABI) {
    return {"skipped: its descriptor is of another version (struct_size " +
            std::to_string(descriptor ? descriptor->struct_size : 0) + ", abi " +
            std::to_string(descriptor ? descriptor->abi : 0) + "; this libblobrt-caffe reads abi " +
            std::to_string(BLOBRT_CAFFE_LAYER_PLUGIN_ABI) + ", struct_size " +
            std::to_string(sizeof(blobrt_caffe_layer_plugin)) + ")"};
  }
  if (descriptor->name == nullptr || descriptor->caffe_build == nullptr || descriptor->toolkit == nullptr ||
      descriptor->register_layers == nullptr) {
    return {"skipped: its descriptor leaves a name, the Caffe build's id, the toolkit or register_layers null"};
  }
  if (descriptor->memory != static_cast<std::int32_t>(memory)) {
    return {std::string("skipped: its kernels are for ") +
            blobrt::to_string(static_cast<blobrt::NativeDeviceType>(descriptor->memory)) +
            " memory, its file name says " + blobrt::to_string(memory)};
  }
  const std::string& want = p.caffe_build;
  if (want.empty() || want != descriptor->caffe_build) {
    return {std::string("skipped: built for another Caffe build (its id ") + descriptor->caffe_build +
            ", this libcaffe's " + (want.empty() ? std::string("none: no portable libcaffe is loaded") : want) +
            "): the layer classes may differ; build it with this libcaffe"};
  }
  const std::size_t classes = descriptor->register_layers();
  p.libraries.push_back(std::move(library));
  return {"loaded: " + std::to_string(classes) + " layer classes (" + descriptor->toolkit + ")"};
}

}  // namespace

void add_layer_plugin_folder_of(const void* address, const char* subdirectory, const char* caffe_build) {
  std::string folder;
  try {
    // Absolute now: the library may have been loaded by a relative path, and the process
    // may change directory before a GPU method first runs.
    const std::string library = boost::dll::symbol_location_ptr(address).string();
    folder = (std::filesystem::absolute(library).parent_path() / subdirectory).lexically_normal().string();
  } catch (const std::exception& error) {
    blobrt::log_message(blobrt::LogLevel::kWarn, "caffe: the folder of Caffe's library is unknown (", error.what(),
                        "): its Caffe-layers plugins are not looked for");
    return;
  }
  Plugins& p = plugins();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.folders.push_back(folder);
  if (p.caffe_build.empty()) p.caffe_build = caffe_build;
}

std::size_t load_layer_plugins(blobrt::NativeDeviceType memory) {
  Plugins& p = plugins();
  // DLPack's device types are all below 64.
  const std::uint64_t bit = std::uint64_t{1} << (static_cast<std::uint32_t>(memory) & 63);
  if (p.looked_for_bits.load(std::memory_order_acquire) & bit) return 0;
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.looked_for_bits.load(std::memory_order_relaxed) & bit) return 0;
  std::size_t loaded = 0;
  std::size_t found = 0;
  std::string where;
  for (const std::string& folder : search_folders(p)) {
    const std::string path = (std::filesystem::path(folder) / file_name_for(memory)).string();
    where += (where.empty() ? "" : ", ") + folder;
    std::error_code error;
    if (!std::filesystem::exists(path, error) || p.outcomes.count(path)) continue;
    ++found;
    std::string outcome = load_one(p, path, memory);
    const bool ok = outcome.rfind("loaded", 0) == 0;
    loaded += ok;
    blobrt::log_message(ok ? blobrt::LogLevel::kInfo : blobrt::LogLevel::kWarn, "caffe: Caffe-layers plugin ", path,
                        ": ", outcome);
    p.outcomes[path] = std::move(outcome);
  }
  if (found == 0 && !p.folders.empty() && memory != blobrt::NativeDeviceType::kCpu) {
    blobrt::log_message(blobrt::LogLevel::kInfo, "caffe: no Caffe-layers plugin for ", blobrt::to_string(memory),
                        " memory (", file_name_for(memory), ") in ", where);
  }
  p.looked_for_bits.fetch_or(bit, std::memory_order_release);
  return loaded;
}

std::vector<std::string> layer_plugin_report() {
  Plugins& p = plugins();
  std::lock_guard<std::mutex> lock(p.mutex);
  std::vector<std::string> lines;
  std::set<std::string> listed;
  const std::vector<std::string> folders = search_folders(p);
  for (const std::string& folder : folders) {
    std::error_code error;
    std::vector<std::string> files;
    for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("libcaffe-layers-", 0) == 0 && it->path().extension() == ".so") files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      if (!listed.insert(file).second) continue;
      const auto outcome = p.outcomes.find(file);
      if (outcome != p.outcomes.end()) {
        lines.push_back(file + ": " + outcome->second);
      } else {
        const std::string stem = std::filesystem::path(file).stem().string();  // libcaffe-layers-cuda
        const std::string memory = stem.substr(std::string("libcaffe-layers-").size());
        lines.push_back(file + ": not loaded: no device with " + memory + " memory needed it in this process");
      }
    }
  }
  if (lines.empty()) {
    std::string where;
    for (const std::string& folder : folders) where += (where.empty() ? "" : ", ") + folder;
    lines.push_back("no Caffe-layers plugin in " + (where.empty() ? std::string("any folder (no portable libcaffe is loaded)") : where));
  }
  return lines;
}

}  // namespace blobrt_caffe_portable
