// What every Device shares: the defaults of the optional view() and sync_host_alias(), and the host path of
// Caffe's math beyond level 1 for devices that do not do it themselves.
#include "blobrt/device.hpp"

#include <array>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "blobrt/error.hpp"
#include "log.hpp"
#include "math_checks.hpp"

namespace blobrt {

DeviceBuffer Device::view(DeviceBuffer buffer, std::size_t offset, std::size_t bytes) {
  const DeviceDescription& d = description();
  if (!d.addressable_handles) {
    detail::fail_as<UnsupportedError>(d.id(), " (", d.name, "): its plugin offers no views of a buffer (",
                                      bytes, " bytes at offset ", offset, ")");
  }
  if (d.view_alignment && offset % d.view_alignment) {
    detail::fail(d.id(), ": view offset ", offset, " is not a multiple of the device's view alignment ",
                 d.view_alignment);
  }
  // Handles of this device are host pointers: a view is the pointer at the offset.
  return static_cast<char*>(buffer) + offset;
}

void Device::sync_host_alias(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, AliasSync direction) {
  char* alias = static_cast<char*>(host_alias(buffer));
  if (!alias) {
    const DeviceDescription& d = description();
    detail::fail(d.id(), " (", d.name, "): sync_host_alias on a buffer with no host alias (", bytes,
                 " bytes at offset ", offset, ")");
  }
  if (direction == AliasSync::kToHost) {
    copy_to_host(buffer, offset, alias + offset, bytes);
  } else {
    copy_to_device(alias + offset, buffer, offset, bytes);
  }
}

void math::fail_unknown_precision(const DeviceDescription& d, Precision precision, const char* routine) {
  detail::fail(d.id(), ": ", routine, " with unknown precision code ", static_cast<int>(precision));
}

void math::fail_no_fp64(const DeviceDescription& d, const char* routine) {
  detail::fail_as<UnsupportedError>(d.id(), " (", d.name, "): ", routine,
                                    " refused: the device has no double precision (fp64)");
}

// Level 1 per element type (device.hpp): by default, the Precision forms.
void Device::typed_axpy(std::int64_t n, float alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
                        std::int64_t y_off) {
  axpy(Precision::kFloat32, n, alpha, x, x_off, y, y_off);
}
void Device::typed_axpy(std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
                        std::int64_t y_off) {
  axpy(Precision::kFloat64, n, alpha, x, x_off, y, y_off);
}
void Device::typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
                       std::int64_t y_off, float* result) {
  *result = static_cast<float>(dot(Precision::kFloat32, n, x, x_off, y, y_off));
}
void Device::typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
                       std::int64_t y_off, double* result) {
  *result = dot(Precision::kFloat64, n, x, x_off, y, y_off);
}
void Device::typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, float* result) {
  *result = static_cast<float>(asum(Precision::kFloat32, n, x, x_off));
}
void Device::typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, double* result) {
  *result = asum(Precision::kFloat64, n, x, x_off);
}
void Device::typed_scal(std::int64_t n, float alpha, DeviceBuffer x, std::int64_t x_off) {
  scal(Precision::kFloat32, n, alpha, x, x_off);
}
void Device::typed_scal(std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_off) {
  scal(Precision::kFloat64, n, alpha, x, x_off);
}

namespace {

using math::MathArgs;
using math::MathOp;
using math::MathSemantics;

// Says once per device and operation that it runs on the host through copies.
void note_host_path(const DeviceDescription& d, const std::string& operation) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(d.id() + " " + operation).second) {
    log::info(d.id(), ": ", operation, " is not offered by the device; it runs on the host",
              d.memory_model == MemoryModel::kShared ? "" : " through copies");
  }
}

// Elements [offset, offset + count) of a device buffer, as host memory: the buffer itself
// on devices whose handles are host pointers, else a copy (written back by store()).
template <typename T>
class HostOperand {
 public:
  HostOperand(Device& device, ConstDeviceBuffer buffer, std::int64_t offset, std::int64_t count, bool read)
      : device_(device), buffer_(const_cast<DeviceBuffer>(buffer)), offset_(offset), count_(count) {
    if (!buffer || count <= 0) return;
    if (device.description().memory_model == blobrt::MemoryModel::kShared) {
      pointer_ = static_cast<T*>(buffer_) + offset;
      return;
    }
    copy_.resize(static_cast<std::size_t>(count));
    if (read) device.copy_to_host(buffer, bytes(offset), copy_.data(), bytes(count));
    pointer_ = copy_.data();
  }
  T* get() const { return pointer_; }
  void store() {
    if (!copy_.empty()) device_.copy_to_device(copy_.data(), buffer_, bytes(offset_), bytes(count_));
  }

 private:
  static std::size_t bytes(std::int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(T); }
  Device& device_;
  DeviceBuffer buffer_;
  std::int64_t offset_;
  std::int64_t count_;
  std::vector<T> copy_;
  T* pointer_ = nullptr;
};

// Runs a call on host memory: each operand the buffer itself or a copy of the elements it
// touches (HostOperand), the operation's host kernel, the written operand stored back.
template <MathOp Op>
void run_through_host(Device& device, const MathArgs<Op>& args) {
  const DeviceDescription& d = device.description();
  if (!math::check(d, args)) return;
  note_host_path(d, math::describe_routine(args));
  const auto operands = MathSemantics<Op>::operands(args);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<HostOperand<T>> host;
    host.reserve(operands.size());
    std::array<T*, std::tuple_size<decltype(operands)>::value> pointers{};
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const blobrt_kernels::Operand& o = operands[i];
      host.emplace_back(device, o.buffer, o.offset, o.count, o.read);
      pointers[i] = host.back().get();
    }
    if (!MathSemantics<Op>::template run<T>(args, pointers.data())) {
      detail::fail(d.id(), ": ", math::describe(args), ": an operation code the host kernels do not know");
    }
    for (std::size_t i = 0; i < operands.size(); ++i) {
      if (operands[i].written) host[i].store();
    }
  };
  if (args.precision == BLOBRT_FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
}

}  // namespace

// Every operation of blobrt/math_operations.h: checked, then run on the host.
#define BLOBRT_DEVICE_HOST_PATH_(X, since, name, parameters)                   \
  void Device::name(BLOBRT_DEVICE_MATH_PARAMETERS(parameters)) {               \
    run_through_host(*this, BLOBRT_MATH_ARGS_FROM_DEVICE(name, parameters));   \
  }
BLOBRT_MATH_OPERATIONS(BLOBRT_DEVICE_HOST_PATH_, ~)
#undef BLOBRT_DEVICE_HOST_PATH_

}  // namespace blobrt
