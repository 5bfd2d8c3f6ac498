// Level 1 of a built-in device, forwarded once for all of them: the Precision forms
// (Device::axpy(Precision, ...)) and the typed slots (Device::typed_axpy, kept for
// libblobrt.so.1's vtable) both reach the device's own per-type members axpy_as<T>,
// dot_as<T>, asum_as<T> and scal_as<T>. A typed call (caffe_gpu_axpy<float>, ...) makes one
// virtual call and no run-time precision branch; a Precision call branches once. Both
// refuse double precision on a device without it here, so no plugin entry sees it.
//
//   class HostDevice final : public Level1Forwarding<HostDevice> {
//     friend class Level1Forwarding<HostDevice>;
//     template <typename T> void axpy_as(n, T alpha, x, x_offset, y, y_offset);  ...
//   };
#ifndef BLOBRT_CORE_DEVICE_LEVEL1_FORWARDING_HPP
#define BLOBRT_CORE_DEVICE_LEVEL1_FORWARDING_HPP

#include <cstdint>

#include "blobrt/device.hpp"
#include "math_checks.hpp"

namespace blobrt {

template <typename Derived>
class Level1Forwarding : public Device {
 public:
  using Device::asum;  // Caffe's typed spellings, beside the Precision forms overridden here
  using Device::axpy;
  using Device::dot;
  using Device::scal;

  // The Precision forms. Float scalars are the caller's float values, so narrowing alpha is
  // exact, and a float result widens exactly.
  void axpy(Precision precision, std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_offset,
            DeviceBuffer y, std::int64_t y_offset) final {
    if (is_double(precision, "axpy")) return self().template axpy_as<double>(n, alpha, x, x_offset, y, y_offset);
    self().template axpy_as<float>(n, static_cast<float>(alpha), x, x_offset, y, y_offset);
  }
  double dot(Precision precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset, ConstDeviceBuffer y,
             std::int64_t y_offset) final {
    if (is_double(precision, "dot")) return result_of<double>([&](double* r) { self().dot_as(n, x, x_offset, y, y_offset, r); });
    return result_of<float>([&](float* r) { self().dot_as(n, x, x_offset, y, y_offset, r); });
  }
  double asum(Precision precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset) final {
    if (is_double(precision, "asum")) return result_of<double>([&](double* r) { self().asum_as(n, x, x_offset, r); });
    return result_of<float>([&](float* r) { self().asum_as(n, x, x_offset, r); });
  }
  void scal(Precision precision, std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_offset) final {
    if (is_double(precision, "scal")) return self().template scal_as<double>(n, alpha, x, x_offset);
    self().template scal_as<float>(n, static_cast<float>(alpha), x, x_offset);
  }

  // The typed slots, one per element type.
  void typed_axpy(std::int64_t n, float alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
                  std::int64_t y_off) final {
    self().template axpy_as<float>(n, alpha, x, x_off, y, y_off);
  }
  void typed_axpy(std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
                  std::int64_t y_off) final {
    math::require_fp64(self().description(), "daxpy");
    self().template axpy_as<double>(n, alpha, x, x_off, y, y_off);
  }
  void typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y, std::int64_t y_off,
                 float* result) final {
    self().dot_as(n, x, x_off, y, y_off, result);
  }
  void typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y, std::int64_t y_off,
                 double* result) final {
    math::require_fp64(self().description(), "ddot");
    self().dot_as(n, x, x_off, y, y_off, result);
  }
  void typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, float* result) final {
    self().asum_as(n, x, x_off, result);
  }
  void typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, double* result) final {
    math::require_fp64(self().description(), "dasum");
    self().asum_as(n, x, x_off, result);
  }
  void typed_scal(std::int64_t n, float alpha, DeviceBuffer x, std::int64_t x_off) final {
    self().template scal_as<float>(n, alpha, x, x_off);
  }
  void typed_scal(std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_off) final {
    math::require_fp64(self().description(), "dscal");
    self().template scal_as<double>(n, alpha, x, x_off);
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }

  // Whether a level-1 call is in double precision; throws for a code that is neither, or
  // for double on a device without it.
  bool is_double(Precision precision, const char* routine) {
    return math::is_double(self().description(), precision, routine);
  }

  template <typename T, typename Run>
  static double result_of(Run run) {
    T result;
    run(&result);
    return result;
  }
};

}  // namespace blobrt

#endif  // BLOBRT_CORE_DEVICE_LEVEL1_FORWARDING_HPP
