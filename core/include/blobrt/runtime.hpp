// What blobrt found on this machine and which device it uses.
//
// The first call to anything here (or the first Blob that allocates) discovers the
// plugins once: BLOBRT_PLUGIN_PATH, then the installed plugins.d. The backend comes
// from select_backend() if the program called it, else from BLOBRT_BACKEND, else "auto".
#ifndef BLOBRT_RUNTIME_HPP
#define BLOBRT_RUNTIME_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blobrt/device.hpp"

namespace blobrt {

// One directory the loader looked in, and why.
struct SearchDirectory {
  std::string path;
  std::string origin;  // "BLOBRT_PLUGIN_PATH", "BLOBRT_PLUGIN_SYSTEM_PATH" or "installed"
  bool exists = false;
  std::string refused;  // why its contents are not trusted ("" when searched)
};

// One manifest the loader read, and its verdict.
struct PluginReport {
  std::string name;              // backend name from the manifest ("" if unreadable)
  std::string manifest;          // path of the manifest file
  std::string library;           // path of the shared object it names
  std::string abi;               // ABI the manifest declares, "major.minor"
  int priority = 0;
  std::vector<std::string> required_libraries;  // the manifest's `requires`: shared libraries it needs
  bool fork_safe = false;        // its devices stay usable in a fork()ed child (manifest)
  std::string library_version;   // from the loaded table, when it got that far
  bool usable = false;           // loaded and has at least one device
  std::string reason;            // why it is not usable (empty when usable)
  std::vector<DeviceDescription> devices;
};

struct Inventory {
  std::vector<SearchDirectory> directories;
  std::vector<PluginReport> plugins;  // in search order; the built-in host is not listed
  bool environment_ignored = false;   // setuid/setgid process: env variables not read
};

// Discovers plugins (once) and returns what was found. Never throws.
const Inventory& inventory();

// The device every SyncedMemory allocates on. Selects per BLOBRT_BACKEND on first use;
// throws blobrt::Error if the requested backend cannot be used.
const std::shared_ptr<Device>& active_device();
// "blis:0" etc.; selects like active_device() if nothing was selected yet.
std::string active_backend();
// Why the active backend was chosen and why each other one was not (for `blobrt info`).
std::vector<std::string> selection_log();

// Selects "auto", "host", "NAME" or "NAME:INDEX". Throws blobrt::Error listing every
// plugin found, where the loader looked and why each failed, if it cannot be used.
// Memory allocated on the previous device stays bound to it: touching its device side
// afterwards throws.
void select_backend(const std::string& spec);

// Opens a device without making it active (conformance tests, `blobrt selftest`).
std::shared_ptr<Device> open_device(const std::string& spec);
// Every backend:index that can be opened here, host first.
std::vector<std::string> available_devices();

// The always-present built-in host device (the conformance reference).
const std::shared_ptr<Device>& host_device();

// The device the CPU half of Caffe's math (caffe_cpu_gemm and the rest, on host pointers)
// runs on: of the usable plugin devices whose handles are host pointers (memory_model()
// kShared), the one with the highest manifest priority that opens, else the built-in host
// device. Chosen and opened once per process, then cached; it does not change, and is not
// changed by, the active device. Never throws.
std::shared_ptr<Device> host_math_device();

// Bytes the core copied between the host mirror and a device (and device-to-device),
// counted since start or the last reset. Host-memory devices never add to it.
struct TransferCounters {
  std::uint64_t host_to_device = 0;
  std::uint64_t device_to_host = 0;
};
TransferCounters transfer_counters();
void reset_transfer_counters();

// "1.0.0"
const char* version();
// The file this libblobrt was loaded from (which copy is in use when several are
// installed: a system one, a wheel's); "" if it cannot be told.
std::string library_path();

}  // namespace blobrt

#endif  // BLOBRT_RUNTIME_HPP
