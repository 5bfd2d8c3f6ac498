// What blobrt found on this machine and which device it uses.
//
// The first call to anything here (or the first Blob that allocates) discovers the
// plugins once: BLOBRT_PLUGIN_PATH, then the installed plugins.d.
//
// Devices per thread, as Caffe's Caffe::Get() and c10's current device: every thread has a
// current device, the one new SyncedMemory binds to and Caffe's caffe_gpu_* run on.
//  - The process default comes from select_backend() if the program called it, else from
//    BLOBRT_BACKEND, else "auto". A thread that selected nothing follows it.
//  - A thread selects its own with DeviceGuard (for a scope, restoring the previous one)
//    or select_thread_device() (until changed; Caffe::SetDevice does this). Other threads
//    and the process default are not affected.
//  - select_backend() sets the process default and the calling thread follows it again
//    (drops that thread's own selection); threads with their own selection keep it.
#ifndef BLOBRT_RUNTIME_HPP
#define BLOBRT_RUNTIME_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blobrt/device.hpp"
#include "blobrt/plugin_report.hpp"     // SearchDirectory, PluginReport, Inventory
#include "blobrt/transfer_counters.hpp"  // TransferCounters, transfer_counters()

namespace blobrt {

// Discovers plugins (once) and returns what was found. Never throws.
const Inventory& inventory();
// For each of PLUGIN's required libraries (its manifest's `requires`, in order), the file
// its probe had loaded under that name, "" where none: which CUDA runtime a node really
// uses, pip's or the system's. Empty for a plugin not in inventory(). Never throws.
std::vector<std::string> required_library_files(const PluginReport& plugin);

// The calling thread's current device: the one it selected (DeviceGuard,
// select_thread_device), else the process default. Every SyncedMemory made on this thread
// binds to it. Selects the default per BLOBRT_BACKEND on first use; throws blobrt::Error if
// the requested backend cannot be used. The reference stays valid for the process's life.
const std::shared_ptr<Device>& current_device();
// The process default, whatever this thread selected.
const std::shared_ptr<Device>& default_device();
// The current device's id, "blis:0" etc.: current_device()->description().id().
std::string current_device_id();

// Older names, kept so that code written against them still compiles (with a warning).
// active_device() is current_device() under its name from before devices were per thread;
// active_backend() returned a device id, not a backend's name.
[[deprecated("use current_device()")]] inline const std::shared_ptr<Device>& active_device() {
  return current_device();
}
[[deprecated("use current_device_id()")]] inline std::string active_backend() { return current_device_id(); }

// Why the process default was chosen and why each other one was not, as prose: the
// lines of selection_report() (`BLOBRT_LOG=info` logs the same).
std::vector<std::string> selection_log();

// Why selection passed over a backend or a device, as a code that does not change with
// the wording of the reason (to_string: the spelling of `blobrt info --json`).
enum class SkipCode {
  // The plugin is not usable; the same codes as its PluginStatus.
  kRefused, kInvalidManifest, kReservedName, kShadowed, kNotLoadable, kInitFailed, kNoDevice,
  kWillNotOpen, kNoAnswer,
  kLoadFailed,     // usable when probed, but its library would not load (or initialise) now
  kOpenFailed,     // usable when probed, but the device would not open now
  kNoSuchDevice,   // the index named is not one of the backend's devices
  kNotFound,       // no plugin with the name named was found
  kLowerPriority,  // usable, but auto ranked it below the one chosen
  kBuiltinLast,    // the built-in host device, which auto takes only when no plugin device opens
  kNotNamed,       // a backend was named (BLOBRT_BACKEND=NAME, select_backend): not this one
};
const char* to_string(SkipCode code) noexcept;

// One backend (or one of its devices) the selection did not take, and why.
struct SelectionSkip {
  std::string backend;  // plugin name, "host", or the manifest's path when it has no name
  std::string device;   // "NAME:INDEX" when a device was tried, else ""
  SkipCode code = SkipCode::kNotFound;
  std::string reason;   // the reason in words
};

// How the process default was selected.
struct SelectionReport {
  std::string requested;  // "auto", "host", "NAME" or "NAME:INDEX", as given
  std::string origin;     // "select_backend", "BLOBRT_BACKEND" or "default" (nothing asked: auto)
  std::string chosen;     // the device's id; "" when selection failed
  std::string why;        // why it was chosen ("priority 200, has an accelerator", ...)
  std::vector<SelectionSkip> skipped;  // in the order selection considered them
  std::string error;      // the error selection threw, when it failed ("" otherwise)
};

// The selection of the process default, in structure (`blobrt info --json`, blobrt.info()).
// Selects the default first if nothing has, as current_device() does. Never throws: when
// the default cannot be selected, `error` says why and `skipped` has the backend named with
// its code. After a select_backend() that failed, the default (and this report) is unchanged.
SelectionReport selection_report();

// Sets the process default to "auto", "host", "NAME" or "NAME:INDEX", and makes the
// calling thread follow it (its own selection, if any, is dropped). Throws blobrt::Error
// listing every plugin found, where the loader looked and why each failed, if it cannot
// be used. Memory stays bound to the device it was made on: touching its device side from
// a thread whose current device is another throws.
void select_backend(const std::string& spec);

// Selects the calling thread's device (same spellings as select_backend) until it selects
// again; no other thread and not the process default. Throws blobrt::Error as
// select_backend does, and then leaves the thread's device as it was.
void select_thread_device(const std::string& spec);
// The calling thread follows the process default again.
void reset_thread_device();

// The calling thread's device for a scope: `blobrt::DeviceGuard guard("opencl:0");`.
// The destructor restores what the thread had before (its own selection, or following the
// process default). Made and destroyed on the same thread; guards nest.
class DeviceGuard {
 public:
  explicit DeviceGuard(const std::string& spec);
  // A device the runtime opened (current_device(), open_device(), a SyncedMemory's
  // device()): work on the device a blob lives on. Throws blobrt::Error for any other.
  explicit DeviceGuard(const std::shared_ptr<Device>& device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  const std::shared_ptr<Device>& device() const { return *device_; }

 private:
  const std::shared_ptr<Device>* previous_;  // the thread's own selection before; null: the default
  const std::shared_ptr<Device>* device_;
};

// Opens a device without making it current (conformance tests, `blobrt selftest`).
std::shared_ptr<Device> open_device(const std::string& spec);
// Every backend:index that can be opened here, host first.
std::vector<std::string> available_devices();

// From now on, a device whose buffer handles are not addresses (an OpenCL cl_mem) opens
// behind handles that are, in a reserved range of the address space: `handle + n` is byte
// n of the same buffer, as Caffe's GPU code takes gpu_data() to be. Inside blobrt only:
// its description still says addressable_handles false, so DLPack export and NCCL refuse
// such handles. Each operation costs one lookup per buffer, and a handle inside no live
// buffer is a blobrt::Error. BLOBRT_ADDRESSABLE_HANDLES=1 asks for it from the start;
// blobrt-caffe's portable build asks when Caffe's library loads. Returns false when such a
// device was opened before (it keeps its handles; devices opened later do not).
bool request_addressable_handles();
// Whether `handle + n` is byte n of the same buffer for blobrt's operations on `device`:
// its handles are addresses, or it was opened behind addressable ones.
bool handles_take_offsets(const Device& device) noexcept;

// The always-present built-in host device (the conformance reference).
const std::shared_ptr<Device>& host_device();

// The device the CPU half of Caffe's math (caffe_cpu_gemm and the rest, on host pointers)
// runs on: of the usable plugin devices whose handles are host pointers (memory_model()
// kShared), the one with the highest manifest priority that opens, else the built-in host
// device. Chosen and opened once per process, then cached; it does not change, and is not
// changed by, any thread's current device. Never throws.
std::shared_ptr<Device> host_math_device();

// "1.0.0"
const char* version();
// The file this libblobrt was loaded from (which copy is in use when several are
// installed: a system one, a wheel's); "" if it cannot be told.
std::string library_path();

}  // namespace blobrt

#endif  // BLOBRT_RUNTIME_HPP
