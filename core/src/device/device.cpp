// What every Device shares: the default of the optional view(), and the host path of
// Caffe's math beyond level 1 for devices that do not do it themselves.
#include "blobrt/device.hpp"

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "blobrt/error.hpp"
#include "blobrt_kernels/elementwise.hpp"
#include "blobrt_kernels/gemm.hpp"
#include "log.hpp"

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

namespace {

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

void check_sizes(const DeviceDescription& d, const char* operation, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m < 0 || n < 0 || k < 0) detail::fail(d.id(), ": ", operation, " with negative sizes m=", m, " n=", n, " k=", k);
}

template <typename T>
void gemm_on_host(Device& device, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                  ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b, std::int64_t b_off, double beta,
                  DeviceBuffer c, std::int64_t c_off) {
  HostOperand<T> ha(device, a, a_off, m * k, true);
  HostOperand<T> hb(device, b, b_off, k * n, true);
  HostOperand<T> hc(device, c, c_off, m * n, beta != 0);
  blobrt_kernels::gemm<T>(ta, tb, m, n, k, static_cast<T>(alpha), ha.get(), hb.get(), static_cast<T>(beta), hc.get());
  hc.store();
}

template <typename T>
void gemv_on_host(Device& device, bool ta, std::int64_t m, std::int64_t n, double alpha, ConstDeviceBuffer a,
                  std::int64_t a_off, ConstDeviceBuffer x, std::int64_t x_off, double beta, DeviceBuffer y,
                  std::int64_t y_off) {
  HostOperand<T> ha(device, a, a_off, m * n, true);
  HostOperand<T> hx(device, x, x_off, ta ? m : n, true);
  HostOperand<T> hy(device, y, y_off, ta ? n : m, beta != 0);
  blobrt_kernels::gemv<T>(ta, m, n, static_cast<T>(alpha), ha.get(), hx.get(), static_cast<T>(beta), hy.get());
  hy.store();
}

template <typename T>
void elementwise_on_host(Device& device, ElementwiseOp op, std::int64_t n, double alpha, double beta,
                         ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b, std::int64_t b_off,
                         DeviceBuffer y, std::int64_t y_off) {
  const int code = static_cast<int>(op);
  HostOperand<T> ha(device, blobrt_kernels::reads_a(code) ? a : nullptr, a_off, n, true);
  HostOperand<T> hb(device, blobrt_kernels::reads_b(code) ? b : nullptr, b_off, n, true);
  HostOperand<T> hy(device, y, y_off, n, blobrt_kernels::reads_y(code));
  blobrt_kernels::elementwise<T>(code, n, static_cast<T>(alpha), static_cast<T>(beta), ha.get(), hb.get(), hy.get());
  hy.store();
}

}  // namespace

void Device::gemm(Precision precision, Transpose trans_a, Transpose trans_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, double alpha, ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b,
                  std::int64_t b_off, double beta, DeviceBuffer c, std::int64_t c_off) {
  check_sizes(description(), "gemm", m, n, k);
  if (m == 0 || n == 0) return;
  note_host_path(description(), "gemm");
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
  if (precision == Precision::kFloat64) {
    gemm_on_host<double>(*this, ta, tb, m, n, k, alpha, a, a_off, b, b_off, beta, c, c_off);
  } else {
    gemm_on_host<float>(*this, ta, tb, m, n, k, alpha, a, a_off, b, b_off, beta, c, c_off);
  }
}

void Device::gemv(Precision precision, Transpose trans_a, std::int64_t m, std::int64_t n, double alpha,
                  ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer x, std::int64_t x_off, double beta,
                  DeviceBuffer y, std::int64_t y_off) {
  check_sizes(description(), "gemv", m, n, 0);
  if ((trans_a == Transpose::kYes ? n : m) == 0) return;
  note_host_path(description(), "gemv");
  const bool ta = trans_a == Transpose::kYes;
  if (precision == Precision::kFloat64) {
    gemv_on_host<double>(*this, ta, m, n, alpha, a, a_off, x, x_off, beta, y, y_off);
  } else {
    gemv_on_host<float>(*this, ta, m, n, alpha, a, a_off, x, x_off, beta, y, y_off);
  }
}

void Device::elementwise(Precision precision, ElementwiseOp op, std::int64_t n, double alpha, double beta,
                         ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b, std::int64_t b_off,
                         DeviceBuffer y, std::int64_t y_off) {
  if (!blobrt_kernels::is_elementwise_op(static_cast<int>(op))) {
    detail::fail(description().id(), ": unknown element-wise operation code ", static_cast<int>(op));
  }
  if (n < 0) detail::fail(description().id(), ": element-wise ", to_string(op), " with n=", n);
  if (n == 0) return;
  note_host_path(description(), std::string("element-wise ") + to_string(op));
  if (precision == Precision::kFloat64) {
    elementwise_on_host<double>(*this, op, n, alpha, beta, a, a_off, b, b_off, y, y_off);
  } else {
    elementwise_on_host<float>(*this, op, n, alpha, beta, a, a_off, b, b_off, y, y_off);
  }
}

}  // namespace blobrt
