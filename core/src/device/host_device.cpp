#include "host_device.hpp"

#include <cstring>
#include <thread>

#include <unistd.h>

#include "blobrt_kernels/elementwise.hpp"
#include "blobrt_kernels/gemm.hpp"
#include "blobrt_kernels/level1.hpp"
#include "host_memory.hpp"
#include "math_checks.hpp"

namespace blobrt {
namespace {

template <typename T>
T* at(DeviceBuffer buffer, std::int64_t offset) {
  return static_cast<T*>(buffer) + offset;
}
template <typename T>
const T* at(ConstDeviceBuffer buffer, std::int64_t offset) {
  return static_cast<const T*>(buffer) + offset;
}

// An operand an operation may not name: null stays null.
template <typename T>
const T* operand(ConstDeviceBuffer buffer, std::int64_t offset) {
  return buffer ? static_cast<const T*>(buffer) + offset : nullptr;
}

class HostDevice final : public Device {
 public:
  HostDevice() {
    description_.backend = "host";
    description_.index = 0;
    description_.name = "host CPU (built-in kernels)";
    description_.details = std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0) {
      description_.memory_bytes = static_cast<std::uint64_t>(pages) * page_size;
    }
    description_.kind = DeviceKind::kCpu;
    description_.memory_model = MemoryModel::kShared;
    description_.native_type = NativeDeviceType::kCpu;
    description_.addressable_handles = true;
    description_.view_alignment = 64;
    description_.supports_fp64 = true;
  }

  const DeviceDescription& description() const noexcept override { return description_; }

  DeviceBuffer allocate(std::size_t bytes) override { return host_memory::allocate(bytes); }
  void release(DeviceBuffer buffer) noexcept override { host_memory::release(buffer); }

  void copy_to_device(const void* host, DeviceBuffer dst, std::size_t dst_offset,
                      std::size_t bytes) override {
    blobrt_kernels::copy_bytes(at<char>(dst, dst_offset), host, bytes);
  }
  void copy_to_host(ConstDeviceBuffer src, std::size_t src_offset, void* host,
                    std::size_t bytes) override {
    blobrt_kernels::copy_bytes(host, at<char>(src, src_offset), bytes);
  }
  void copy_device(ConstDeviceBuffer src, std::size_t src_offset, DeviceBuffer dst,
                   std::size_t dst_offset, std::size_t bytes) override {
    blobrt_kernels::copy_bytes(at<char>(dst, dst_offset), at<char>(src, src_offset), bytes);
  }
  void memset(DeviceBuffer dst, std::size_t offset, int value, std::size_t bytes) override {
    blobrt_kernels::fill_bytes(at<char>(dst, offset), value, bytes);
  }

  void axpy(std::int64_t n, float alpha, ConstDeviceBuffer x, std::int64_t x_off,
            DeviceBuffer y, std::int64_t y_off) override {
    blobrt_kernels::axpy(n, alpha, at<float>(x, x_off), at<float>(y, y_off));
  }
  void axpy(std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_off,
            DeviceBuffer y, std::int64_t y_off) override {
    blobrt_kernels::axpy(n, alpha, at<double>(x, x_off), at<double>(y, y_off));
  }
  void dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
           std::int64_t y_off, float* result) override {
    *result = blobrt_kernels::dot(n, at<float>(x, x_off), at<float>(y, y_off));
  }
  void dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
           std::int64_t y_off, double* result) override {
    *result = blobrt_kernels::dot(n, at<double>(x, x_off), at<double>(y, y_off));
  }
  void asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, float* result) override {
    *result = blobrt_kernels::asum(n, at<float>(x, x_off));
  }
  void asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, double* result) override {
    *result = blobrt_kernels::asum(n, at<double>(x, x_off));
  }
  void scal(std::int64_t n, float alpha, DeviceBuffer x, std::int64_t x_off) override {
    blobrt_kernels::scal(n, alpha, at<float>(x, x_off));
  }
  void scal(std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_off) override {
    blobrt_kernels::scal(n, alpha, at<double>(x, x_off));
  }

  // Caffe's gemm, gemv and element-wise family: the host kernels on the buffers themselves
  // (blobrt_kernels/gemm.hpp, elementwise.hpp), after the checks every device makes.
  void gemm(Precision precision, Transpose trans_a, Transpose trans_b, std::int64_t m, std::int64_t n,
            std::int64_t k, double alpha, ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b,
            std::int64_t b_off, double beta, DeviceBuffer c, std::int64_t c_off) override {
    if (!math_checks::check_gemm(description_, precision, trans_a, trans_b, m, n, k, a, a_off, b, b_off, c, c_off)) {
      return;
    }
    const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
    if (precision == Precision::kFloat64) {
      blobrt_kernels::gemm<double>(ta, tb, m, n, k, alpha, at<double>(a, a_off), at<double>(b, b_off), beta,
                                   at<double>(c, c_off));
    } else {
      blobrt_kernels::gemm<float>(ta, tb, m, n, k, static_cast<float>(alpha), at<float>(a, a_off),
                                  at<float>(b, b_off), static_cast<float>(beta), at<float>(c, c_off));
    }
  }
  void gemv(Precision precision, Transpose trans_a, std::int64_t m, std::int64_t n, double alpha,
            ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer x, std::int64_t x_off, double beta,
            DeviceBuffer y, std::int64_t y_off) override {
    if (!math_checks::check_gemv(description_, precision, trans_a, m, n, a, a_off, x, x_off, y, y_off)) return;
    const bool ta = trans_a == Transpose::kYes;
    if (precision == Precision::kFloat64) {
      blobrt_kernels::gemv<double>(ta, m, n, alpha, at<double>(a, a_off), at<double>(x, x_off), beta,
                                   at<double>(y, y_off));
    } else {
      blobrt_kernels::gemv<float>(ta, m, n, static_cast<float>(alpha), at<float>(a, a_off), at<float>(x, x_off),
                                  static_cast<float>(beta), at<float>(y, y_off));
    }
  }
  void elementwise(Precision precision, ElementwiseOp op, std::int64_t n, double alpha, double beta,
                   ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b, std::int64_t b_off, DeviceBuffer y,
                   std::int64_t y_off) override {
    if (!math_checks::check_elementwise(description_, precision, op, n, a, a_off, b, b_off, y, y_off)) return;
    const int code = static_cast<int>(op);
    if (precision == Precision::kFloat64) {
      blobrt_kernels::elementwise<double>(code, n, alpha, beta, operand<double>(a, a_off), operand<double>(b, b_off),
                                          at<double>(y, y_off));
    } else {
      blobrt_kernels::elementwise<float>(code, n, static_cast<float>(alpha), static_cast<float>(beta),
                                         operand<float>(a, a_off), operand<float>(b, b_off), at<float>(y, y_off));
    }
  }

  void synchronize() override {}

 private:
  DeviceDescription description_;
};

}  // namespace

std::shared_ptr<Device> make_host_device() { return std::make_shared<HostDevice>(); }

}  // namespace blobrt
