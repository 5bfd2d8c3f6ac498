#include "host_device.hpp"

#include <string>
#include <thread>

#include "blobrt/error.hpp"
#include "blobrt/plugin_kit_host.hpp"
#include "blobrt_kernels/team_size.hpp"
#include "host_memory.hpp"
#include "log.hpp"
#include "math_checks.hpp"
#include "level1_forwarding.hpp"

namespace blobrt {
namespace {

// The operations are the plugin kit's host-memory device (blobrt/plugin_kit_host.hpp), the
// code every CPU plugin runs, called directly: the same kernels, no table in between.
using Kit = plugin_kit::HostMemoryDevice;

static_assert(static_cast<int>(Precision::kFloat64) == BLOBRT_FLOAT64 &&
                  static_cast<int>(Transpose::kYes) == BLOBRT_TRANS,
              "the core's math enums are plugin_abi.h's codes");
// ElementwiseOp is made from the same list as the C codes (blobrt/elementwise_operations.h).
#define BLOBRT_EW_SAME_CODE_(CODE, Cxx, ...)                                      \
  static_assert(static_cast<int>(ElementwiseOp::k##Cxx) == BLOBRT_EW_##CODE, \
                "ElementwiseOp::k" #Cxx " is BLOBRT_EW_" #CODE);
BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_SAME_CODE_)
#undef BLOBRT_EW_SAME_CODE_

class HostDevice final : public Level1Forwarding<HostDevice> {
 public:
  HostDevice() {
    description_.backend = "host";
    description_.index = 0;
    description_.name = "host CPU (built-in kernels)";
    description_.details = std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
    description_.memory_bytes = plugin_kit::host_ram_bytes();
    description_.kind = DeviceKind::kCpu;
    description_.memory_model = MemoryModel::kShared;
    description_.native_type = NativeDeviceType::kCpu;
    description_.addressable_handles = true;
    description_.view_alignment = 64;
    description_.supports_fp64 = true;
    // libblobrt's word on BLOBRT_NUM_THREADS/OMP_NUM_THREADS, once per process: the host's
    // team and the plugins' read them alike, and no plugin can log (team_size.hpp).
    blobrt_kernels::configured_team_size([](const std::string& message) { log::warn(message); });
  }

  const DeviceDescription& description() const noexcept override { return description_; }

  DeviceBuffer allocate(std::size_t bytes) override { return host_memory::allocate(bytes); }
  void release(DeviceBuffer buffer) noexcept override { host_memory::release(buffer); }

  void copy_to_device(const void* host, DeviceBuffer dst, std::size_t dst_offset,
                      std::size_t bytes) override {
    Kit::copy_to_device(nullptr, host, dst, dst_offset, bytes, nullptr);
  }
  void copy_to_host(ConstDeviceBuffer src, std::size_t src_offset, void* host,
                    std::size_t bytes) override {
    Kit::copy_to_host(nullptr, src, src_offset, host, bytes, nullptr);
  }
  void copy_device(ConstDeviceBuffer src, std::size_t src_offset, DeviceBuffer dst,
                   std::size_t dst_offset, std::size_t bytes) override {
    Kit::copy_device(nullptr, src, src_offset, dst, dst_offset, bytes, nullptr);
  }
  void memset(DeviceBuffer dst, std::size_t offset, int value, std::size_t bytes) override {
    Kit::memset(nullptr, dst, offset, value, bytes, nullptr);
  }

  // Level 1: Level1Forwarding's Precision forms and typed slots, to axpy_as<T> ... below.

  // Caffe's math operations (blobrt/math_operations.h): the host kernels on the buffers
  // themselves (blobrt_kernels::run_in_place, as the kit's host-memory devices run them),
  // after the checks every device makes.
#define BLOBRT_HOST_DEVICE_MATH_(X, since, name, parameters)                 \
  void name(BLOBRT_DEVICE_MATH_PARAMETERS(parameters)) override {            \
    run_checked(BLOBRT_MATH_ARGS_FROM_DEVICE(name, parameters));             \
  }
  BLOBRT_MATH_OPERATIONS(BLOBRT_HOST_DEVICE_MATH_, ~)
#undef BLOBRT_HOST_DEVICE_MATH_

  void synchronize() override {}

 private:
  friend class Level1Forwarding<HostDevice>;

  template <typename T>
  void axpy_as(std::int64_t n, T alpha, ConstDeviceBuffer x, std::int64_t x_offset, DeviceBuffer y,
               std::int64_t y_offset) {
    Kit::axpy<T>(nullptr, n, alpha, x, x_offset, y, y_offset, nullptr);
  }
  template <typename T>
  void dot_as(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset, ConstDeviceBuffer y, std::int64_t y_offset,
              T* result) {
    Kit::dot<T>(nullptr, n, x, x_offset, y, y_offset, result, nullptr);
  }
  template <typename T>
  void asum_as(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset, T* result) {
    Kit::asum<T>(nullptr, n, x, x_offset, result, nullptr);
  }
  template <typename T>
  void scal_as(std::int64_t n, T alpha, DeviceBuffer x, std::int64_t x_offset) {
    Kit::scal<T>(nullptr, n, alpha, x, x_offset, nullptr);
  }

  template <math::MathOp Op>
  __attribute__((always_inline)) void run_checked(const math::MathArgs<Op>& args) {
    if (!math::check(description_, args)) return;
    blobrt_error err;  // 1 KiB: written only on failure, so not cleared on every call
    err.message[0] = '\0';
    if (blobrt_kernels::run_in_place(args, &err) != BLOBRT_OK) {
      detail::fail(description_.id(), ": ", err.message);  // a code the checks passed but the kernels lack
    }
  }

  DeviceDescription description_;
};

}  // namespace

std::shared_ptr<Device> make_host_device() { return std::make_shared<HostDevice>(); }

}  // namespace blobrt
