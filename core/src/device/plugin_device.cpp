#include "plugin_device.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "blobrt/error.hpp"
#include "exit_guard.hpp"
#include "fork_guard.hpp"
#include "log.hpp"
#include "math_checks.hpp"
#include "plugin_table.hpp"
#include "plugin_text.hpp"
#include "level1_forwarding.hpp"

namespace blobrt {
namespace {

class PluginDevice;

// Every PluginDevice alive, for the exit handler (exit_guard.hpp). Never destroyed: the
// handler and late destructors may run after libblobrt's own static objects are gone.
struct LiveDevices {
  std::mutex mutex;
  std::unordered_set<PluginDevice*> devices;
};
LiveDevices& live_devices() {
  static LiveDevices* const live = new LiveDevices;
  return *live;
}
void close_devices_at_exit() noexcept;

// Memory a device could not free because its plugin may no longer be called (the process
// is exiting, or this is a fork()ed child): it goes with the process. Kept here so that
// it stays reachable, which is what it is, and leak checkers do not report it as lost.
struct KeptUntilExit {
  std::mutex mutex;
  std::vector<const void*> pointers;
};
void keep_until_exit(const void* pointer) noexcept {
  static KeptUntilExit* const kept = new KeptUntilExit;
  try {
    std::lock_guard<std::mutex> lock(kept->mutex);
    kept->pointers.push_back(pointer);
  } catch (...) {
    // Out of memory at exit: the pointer is dropped, the memory still goes with the process.
  }
}

class PluginDevice final : public Level1Forwarding<PluginDevice> {
 public:
  PluginDevice(std::shared_ptr<void> keep_alive, const blobrt_plugin_v1* table,
               DeviceDescription description, bool fork_safe)
      : keep_alive_(std::move(keep_alive)),
        table_(table),
        description_(std::move(description)),
        fork_safe_(fork_safe),
        generation_(fork_guard::generation()) {
    check_process("open");
    blobrt_error err{};
    int status = table_->open_device(description_.index, &context_, &err);
    if (status != BLOBRT_OK) fail_with("open", status, err);
    {
      std::lock_guard<std::mutex> lock(live_devices().mutex);
      live_devices().devices.insert(this);
    }
    exit_guard::arm(close_devices_at_exit);
  }
  ~PluginDevice() override {
    {
      std::lock_guard<std::mutex> lock(live_devices().mutex);
      live_devices().devices.erase(this);
    }
    close_context();
  }

  // Closes the plugin's context unless it was already closed or belongs to the parent
  // of this fork()ed process. Later calls are refused by check_process().
  void close_context() noexcept {
    if (context_ && (fork_safe_ || fork_guard::generation() == generation_)) table_->close_device(context_);
    context_ = nullptr;
  }

  const DeviceDescription& description() const noexcept override { return description_; }

  DeviceBuffer allocate(std::size_t bytes) override {
    check_process("allocate");
    void* handle = nullptr;
    blobrt_error err{};
    int status = table_->allocate(context_, bytes, &handle, &err);
    if (status != BLOBRT_OK || !handle) {
      throw_typed(status, description_.id() + ": cannot allocate " + std::to_string(bytes) + " bytes: " +
                              plugin_message(err, "allocation returned no buffer"));
    }
    if (description_.memory_model != MemoryModel::kShared) {
      std::lock_guard<std::mutex> lock(buffers_mutex_);
      buffers_.insert(handle);
    }
    return handle;
  }
  void release(DeviceBuffer buffer) noexcept override {
    if (description_.memory_model != MemoryModel::kShared) {
      std::lock_guard<std::mutex> lock(buffers_mutex_);
      buffers_.erase(buffer);
    }
    if (usable_here()) {
      table_->release(context_, buffer);
    } else {
      keep_until_exit(buffer);
    }
  }
  bool is_buffer(ConstDeviceBuffer handle) const noexcept override {
    std::lock_guard<std::mutex> lock(buffers_mutex_);
    return buffers_.count(handle) != 0;
  }

  void* allocate_host(std::size_t bytes) override {
    if (!table_->host_allocate || !description_.has_pinned_host || !usable_here()) return nullptr;
    void* pointer = nullptr;
    blobrt_error err{};
    // Pinned memory is an optimisation: fall back to ordinary memory if it runs out.
    if (table_->host_allocate(context_, bytes, &pointer, &err) != BLOBRT_OK) return nullptr;
    return pointer;
  }
  void release_host(void* pointer) noexcept override {
    if (!table_->host_release) return;
    if (usable_here()) {
      table_->host_release(context_, pointer);
    } else {
      keep_until_exit(pointer);
    }
  }

  void* host_alias(ConstDeviceBuffer buffer) noexcept override {
    return table_->host_alias && usable_here() ? table_->host_alias(context_, buffer) : nullptr;
  }

  DeviceBuffer view(DeviceBuffer buffer, std::size_t offset, std::size_t bytes) override {
    if (!has_views(table_)) return Device::view(buffer, offset, bytes);
    if (offset % description_.view_alignment) {
      detail::fail(description_.id(), ": view offset ", offset, " is not a multiple of the device's view alignment ",
                   description_.view_alignment);
    }
    void* handle = nullptr;
    call("view", table_->view, buffer, offset, bytes, &handle);
    if (!handle) detail::fail(description_.id(), ": view returned no handle");
    if (description_.memory_model != MemoryModel::kShared) {
      std::lock_guard<std::mutex> lock(buffers_mutex_);
      buffers_.insert(handle);
    }
    return handle;
  }
  void release_view(DeviceBuffer view) noexcept override {
    if (!has_views(table_)) return;
    if (description_.memory_model != MemoryModel::kShared) {
      std::lock_guard<std::mutex> lock(buffers_mutex_);
      buffers_.erase(view);
    }
    if (usable_here()) table_->release_view(context_, view);
  }

  void copy_to_device(const void* host, DeviceBuffer dst, std::size_t dst_offset,
                      std::size_t bytes) override {
    call("copy_to_device", table_->copy_to_device, host, dst, dst_offset, bytes);
  }
  void copy_to_host(ConstDeviceBuffer src, std::size_t src_offset, void* host,
                    std::size_t bytes) override {
    call("copy_to_host", table_->copy_to_host, src, src_offset, host, bytes);
  }
  // The plugin's own synchronisation where it offers one (ABI 1.4); else the copy onto the
  // alias that older plugins take for it (Device's default).
  void sync_host_alias(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, AliasSync direction) override {
    if (!BLOBRT_PLUGIN_OFFERS(table_, sync_host_alias)) {
      Device::sync_host_alias(buffer, offset, bytes, direction);
      return;
    }
    if (bytes == 0) return;  // nothing to order (plugin_abi.h: never bytes = 0)
    call("sync_host_alias", table_->sync_host_alias, buffer, offset, bytes,
         static_cast<std::int32_t>(direction == AliasSync::kToHost ? BLOBRT_ALIAS_TO_HOST : BLOBRT_ALIAS_TO_DEVICE));
  }
  void copy_device(ConstDeviceBuffer src, std::size_t src_offset, DeviceBuffer dst,
                   std::size_t dst_offset, std::size_t bytes) override {
    call("copy_device", table_->copy_device, src, src_offset, dst, dst_offset, bytes);
  }
  void memset(DeviceBuffer dst, std::size_t offset, int value, std::size_t bytes) override {
    call("memset", table_->memset, dst, offset, static_cast<std::int32_t>(value), bytes);
  }

  // Level 1: Level1Forwarding's Precision forms and typed slots, to axpy_as<T> ... below.

  // Caffe's math operations (blobrt/math_operations.h, ABI 1.2+), one override per entry
  // of the list: the arguments checked, the plugin's entry when its table has one, else
  // (an older table, a NULL entry, or BLOBRT_ERR_UNSUPPORTED for this call) the Device
  // base's host path, which says so once (run_math).
#define BLOBRT_PLUGIN_DEVICE_MATH_(X, since, name, parameters)                                             \
  void name(BLOBRT_DEVICE_MATH_PARAMETERS(parameters)) override {                                          \
    using Args = math::MathArgs<math::MathOp::name>;                                                       \
    run_math(BLOBRT_MATH_ARGS_FROM_DEVICE(name, parameters), BLOBRT_PLUGIN_OFFERS(table_, name),           \
             [this](const Args& args, blobrt_error* err) { return table_->name(context_ parameters(BLOBRT_ARGS_FIELD_), err); }, \
             [this](const Args& args) { Device::name(BLOBRT_MATH_LIST(parameters, BLOBRT_ARGS_AS_DEVICE_)); });    \
  }
#define BLOBRT_ARGS_FIELD_(kind, name) , args.name
#define BLOBRT_ARGS_AS_DEVICE_(kind, name) , static_cast<BLOBRT_DEVICE_TYPE_##kind>(args.name)
  BLOBRT_MATH_OPERATIONS(BLOBRT_PLUGIN_DEVICE_MATH_, ~)
#undef BLOBRT_ARGS_AS_DEVICE_
#undef BLOBRT_ARGS_FIELD_
#undef BLOBRT_PLUGIN_DEVICE_MATH_

  void synchronize() override { call("synchronize", table_->synchronize); }

 private:
  friend class Level1Forwarding<PluginDevice>;

  // Level 1 of one element type: the table's s- or d- entry, with its first-call bit.
  template <typename T>
  void axpy_as(std::int64_t n, T alpha, ConstDeviceBuffer x, std::int64_t x_offset, DeviceBuffer y,
               std::int64_t y_offset) {
    if constexpr (std::is_same_v<T, double>) {
      call_blas(k_daxpy, "daxpy", table_->daxpy, n, alpha, x, x_offset, y, y_offset);
    } else {
      call_blas(k_saxpy, "saxpy", table_->saxpy, n, alpha, x, x_offset, y, y_offset);
    }
  }
  template <typename T>
  void dot_as(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset, ConstDeviceBuffer y, std::int64_t y_offset,
              T* result) {
    if constexpr (std::is_same_v<T, double>) {
      call_blas(k_ddot, "ddot", table_->ddot, n, x, x_offset, y, y_offset, result);
    } else {
      call_blas(k_sdot, "sdot", table_->sdot, n, x, x_offset, y, y_offset, result);
    }
  }
  template <typename T>
  void asum_as(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset, T* result) {
    if constexpr (std::is_same_v<T, double>) {
      call_blas(k_dasum, "dasum", table_->dasum, n, x, x_offset, result);
    } else {
      call_blas(k_sasum, "sasum", table_->sasum, n, x, x_offset, result);
    }
  }
  template <typename T>
  void scal_as(std::int64_t n, T alpha, DeviceBuffer x, std::int64_t x_offset) {
    if constexpr (std::is_same_v<T, double>) {
      call_blas(k_dscal, "dscal", table_->dscal, n, alpha, x, x_offset);
    } else {
      call_blas(k_sscal, "sscal", table_->sscal, n, alpha, x, x_offset);
    }
  }

  // Bits of first_calls_seen_: the level-1 routines, then each math operation in each
  // precision (math_bit).
  enum BlasOp { k_saxpy, k_daxpy, k_sdot, k_ddot, k_sasum, k_dasum, k_sscal, k_dscal, k_level1_count };
  static_assert(k_level1_count + 2 * blobrt_kernels::kMathOpCount <= 64, "a bit per routine");
  template <math::MathOp Op>
  static unsigned math_bit(const math::MathArgs<Op>& args) {
    return k_level1_count + 2 * static_cast<unsigned>(Op) + (args.precision == BLOBRT_FLOAT64 ? 1 : 0);
  }

  // One call of a math operation: checked; reduced to output = beta * output on this
  // device where there is no product to add (the plugin never sees k = 0 or alpha = 0);
  // else the plugin's entry when `offered` (call_plugin(args, &err) returns its status) and
  // it does not answer BLOBRT_ERR_UNSUPPORTED; else host_path(args). A failure throws,
  // naming the device, the routine and its sizes. The first call of each routine and
  // precision is timed at BLOBRT_LOG=debug, as call_blas.
  template <math::MathOp Op, typename CallPlugin, typename HostPath>
  void run_math(const math::MathArgs<Op>& args, bool offered, CallPlugin call_plugin, HostPath host_path) {
    if (!math::check(description_, args)) return;
    double beta = 1;
    if (math::MathSemantics<Op>::only_scales(args, &beta)) return scale_output(args, beta);
    if (!offered) return host_path(args);
    check_process(math::MathArgs<Op>::kName);
    const std::uint64_t bit = std::uint64_t{1} << math_bit(args);
    const bool first = !(first_calls_seen_.load(std::memory_order_relaxed) & bit);
    const auto start = first ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    blobrt_error err;  // 1 KiB: only the first byte is cleared, as in call()
    err.message[0] = '\0';
    const int status = call_plugin(args, &err);
    if (status == BLOBRT_ERR_UNSUPPORTED) {
      log::debug(description_.id(), ": ", math::describe(args), " answered unsupported (",
                 plugin_message(err, "no message from the plugin"), "): the host path runs it");
      return host_path(args);
    }
    if (status != BLOBRT_OK) fail_with(math::describe(args).c_str(), status, err);
    if (err.message[0]) note(math::describe(args).c_str(), err);
    if (first) {
      first_calls_seen_.fetch_or(bit, std::memory_order_relaxed);
      exit_guard::arm(close_devices_at_exit);  // the first call may have loaded more code
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      log::debug(description_.id(), ": first ", math::describe(args), " took ", ms, " ms");
    }
  }

  // output = beta * output for a call with nothing to add: a set for beta = 0 (old values,
  // NaN included, are ignored, as BLAS does), nothing for beta = 1.
  template <math::MathOp Op>
  void scale_output(const math::MathArgs<Op>& args, double beta) {
    const auto operands = math::MathSemantics<Op>::operands(args);
    const blobrt_kernels::Operand& out = blobrt_kernels::output_of(operands);
    const auto precision = static_cast<Precision>(args.precision);
    DeviceBuffer y = const_cast<DeviceBuffer>(out.buffer);
    if (beta == 1) return;
    if (beta == 0) {
      elementwise(precision, ElementwiseOp::kSet, out.count, 0.0, 0.0, nullptr, 0, nullptr, 0, y, out.offset);
    } else {
      elementwise(precision, ElementwiseOp::kScale, out.count, beta, 0.0, y, out.offset, nullptr, 0, y, out.offset);
    }
  }

  // The first call of each BLAS routine is timed and reported at BLOBRT_LOG=debug (what it
  // compiled, and when, the plugin says in its own note: plugin_abi.h); later calls go
  // straight through, as does an empty one (n <= 0, which the plugin answers: it compiles
  // nothing, so it is not the first call worth timing).
  template <typename Fn, typename... Args>
  void call_blas(BlasOp op, const char* what, Fn fn, Args... args) {
    const std::uint64_t bit = std::uint64_t{1} << op;
    std::int64_t n = std::get<0>(std::tie(args...));  // every BLAS op starts with n
    if (n <= 0 || (first_calls_seen_.load(std::memory_order_relaxed) & bit)) {
      call(what, fn, args...);
      return;
    }
    auto start = std::chrono::steady_clock::now();
    call(what, fn, args...);
    first_calls_seen_.fetch_or(bit, std::memory_order_relaxed);
    exit_guard::arm(close_devices_at_exit);  // the first call may have loaded more code
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log::debug(description_.id(), ": first ", what, " took ", ms, " ms");
  }

  // One place where a status becomes an exception: fn(context, args..., &err).
  template <typename Fn, typename... Args>
  void call(const char* what, Fn fn, Args... args) {
    check_process(what);
    blobrt_error err;  // 1 KiB: only the first byte is cleared, on every call's hot path
    err.message[0] = '\0';
    int status = fn(context_, args..., &err);
    if (status != BLOBRT_OK) fail_with(what, status, err);
    if (err.message[0]) note(what, err);
  }

  // A successful call's note (plugin_abi.h), at debug level.
  void note(const char* what, const blobrt_error& err) const {
    log::debug(description_.id(), ": ", what, ": ", plugin_message(err, ""));
  }
  [[noreturn]] void fail_with(const char* what, int status, const blobrt_error& err) const {
    throw_typed(status, description_.id() + " (" + description_.name + "): " + what + " failed: " +
                            plugin_message(err, "no message from the plugin"));
  }
  // A plugin's status as the matching blobrt error type.
  [[noreturn]] static void throw_typed(int status, const std::string& message) {
    if (status == BLOBRT_ERR_OUT_OF_MEMORY) throw OutOfMemoryError(message);
    if (status == BLOBRT_ERR_UNSUPPORTED) throw UnsupportedError(message);
    throw Error(message);
  }

  // False once the process is exiting (exit_guard.hpp), and in a fork()ed child of the
  // process that opened this device unless the plugin declares itself fork-safe
  // (fork_guard.hpp).
  bool usable_here() const noexcept {
    return !exit_guard::exiting() && (fork_safe_ || fork_guard::generation() == generation_);
  }
  void check_process(const char* what) const {
    if (exit_guard::exiting()) {
      detail::fail(description_.id(), " (", description_.name, "): ", what,
                   " refused: the process is exiting, and blobrt closed this plugin's devices before "
                   "its libraries tear themselves down; memory on it is freed with the process. A "
                   "static destructor can still use the built-in host device (select_backend(\"host\"))");
    }
    if (!usable_here()) {
      detail::fail(description_.id(), " (", description_.name, "): ", what,
                   " refused: this device was opened before fork(), and its plugin does not declare "
                   "fork_safe = yes; in the child, select_backend(\"host\") (or a fork-safe backend) "
                   "or exec a new program");
    }
  }

  std::shared_ptr<void> keep_alive_;
  const blobrt_plugin_v1* table_;
  DeviceDescription description_;
  bool fork_safe_;
  std::uint64_t generation_;
  // Live buffers of a device with its own memory (is_buffer); allocation is rare enough
  // for a lock. Host-memory devices keep none.
  mutable std::mutex buffers_mutex_;
  std::unordered_set<const void*> buffers_;
  void* context_ = nullptr;
  std::atomic<std::uint64_t> first_calls_seen_{0};
};

void close_devices_at_exit() noexcept {
  std::lock_guard<std::mutex> lock(live_devices().mutex);
  for (PluginDevice* device : live_devices().devices) device->close_context();
}

}  // namespace

std::shared_ptr<Device> open_plugin_device(std::shared_ptr<void> keep_alive,
                                           const blobrt_plugin_v1* table,
                                           const DeviceDescription& description, bool fork_safe) {
  return std::make_shared<PluginDevice>(std::move(keep_alive), table, description, fork_safe);
}

}  // namespace blobrt
