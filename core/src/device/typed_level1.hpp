// The typed level-1 slots of a device (Device::typed_axpy, ...) overridden with the
// device's own per-type members axpy_as<T>, dot_as<T>, asum_as<T> and scal_as<T>, the
// same members its Precision forms call: a typed call (caffe_gpu_axpy<float>, ...) makes
// one virtual call and no run-time precision branch. In a class body, after those members
// are declared or before (a class's members see each other).
#ifndef BLOBRT_CORE_DEVICE_TYPED_LEVEL1_HPP
#define BLOBRT_CORE_DEVICE_TYPED_LEVEL1_HPP

#include <cstdint>

#define BLOBRT_DEVICE_TYPED_LEVEL1_OVERRIDE_(T)                                                          \
  void typed_axpy(std::int64_t n, T alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,    \
                  std::int64_t y_off) override {                                                         \
    axpy_as<T>(n, alpha, x, x_off, y, y_off);                                                            \
  }                                                                                                      \
  void typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,           \
                 std::int64_t y_off, T* result) override {                                               \
    dot_as(n, x, x_off, y, y_off, result);                                                              \
  }                                                                                                      \
  void typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, T* result) override {         \
    asum_as(n, x, x_off, result);                                                                       \
  }                                                                                                      \
  void typed_scal(std::int64_t n, T alpha, DeviceBuffer x, std::int64_t x_off) override {                \
    scal_as<T>(n, alpha, x, x_off);                                                                      \
  }

#define BLOBRT_DEVICE_TYPED_LEVEL1_OVERRIDES \
  BLOBRT_DEVICE_TYPED_LEVEL1_OVERRIDE_(float) \
  BLOBRT_DEVICE_TYPED_LEVEL1_OVERRIDE_(double)

#endif
