// Level 1's two spellings on a Device (device.hpp): Caffe's typed one (axpy(n, float alpha,
// ...)) calls the typed slot, whose default forwards to the Precision form. A device that
// overrides only the Precision forms (as a device written outside blobrt does) must answer
// typed calls in the right precision, with the scalar and result converted exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blobrt/device.hpp"

namespace blobrt {
namespace {

// Records which Precision form ran, with which precision and scalar; memory is the host's.
class PrecisionOnlyDevice final : public Device {
 public:
  using Device::asum;
  using Device::axpy;
  using Device::dot;
  using Device::scal;

  const DeviceDescription& description() const noexcept override { return description_; }
  DeviceBuffer allocate(std::size_t bytes) override { return new char[bytes]; }
  void release(DeviceBuffer buffer) noexcept override { delete[] static_cast<char*>(buffer); }
  void copy_to_device(const void*, DeviceBuffer, std::size_t, std::size_t) override {}
  void copy_to_host(ConstDeviceBuffer, std::size_t, void*, std::size_t) override {}
  void copy_device(ConstDeviceBuffer, std::size_t, DeviceBuffer, std::size_t, std::size_t) override {}
  void memset(DeviceBuffer, std::size_t, int, std::size_t) override {}
  void synchronize() override {}

  void axpy(Precision precision, std::int64_t n, double alpha, ConstDeviceBuffer, std::int64_t, DeviceBuffer,
            std::int64_t) override {
    record("axpy", precision, n, alpha);
  }
  double dot(Precision precision, std::int64_t n, ConstDeviceBuffer, std::int64_t, ConstDeviceBuffer,
             std::int64_t) override {
    record("dot", precision, n, 0);
    return 0.1;  // not a float: the float spelling must round it as a float result would be
  }
  double asum(Precision precision, std::int64_t n, ConstDeviceBuffer, std::int64_t) override {
    record("asum", precision, n, 0);
    return 2.5;
  }
  void scal(Precision precision, std::int64_t n, double alpha, DeviceBuffer, std::int64_t) override {
    record("scal", precision, n, alpha);
  }

  std::vector<std::string> calls;
  double last_scalar = 0;

 private:
  void record(const char* what, Precision precision, std::int64_t n, double scalar) {
    calls.push_back(std::string(what) + (precision == Precision::kFloat64 ? "/f64/" : "/f32/") + std::to_string(n));
    last_scalar = scalar;
  }
  DeviceDescription description_;
};

TEST(Level1Forms, TypedSpellingsReachThePrecisionFormsOfADeviceThatHasOnlyThose) {
  PrecisionOnlyDevice device;
  float xf[4] = {}, yf[4] = {};
  double xd[4] = {}, yd[4] = {};
  device.axpy(4, 0.3f, xf, 0, yf, 0);
  EXPECT_EQ(device.last_scalar, static_cast<double>(0.3f));  // the float's value, exactly
  device.axpy(3, 0.3, xd, 0, yd, 0);
  EXPECT_EQ(device.last_scalar, 0.3);
  float rf = 0;
  double rd = 0;
  device.dot(2, xf, 0, yf, 0, &rf);
  EXPECT_EQ(rf, static_cast<float>(0.1));
  device.dot(2, xd, 0, yd, 0, &rd);
  EXPECT_EQ(rd, 0.1);
  device.asum(5, xf, 0, &rf);
  EXPECT_EQ(rf, 2.5f);
  device.asum(6, xd, 0, &rd);
  EXPECT_EQ(rd, 2.5);
  device.scal(7, -2.0f, xf, 0);
  EXPECT_EQ(device.last_scalar, -2.0);
  device.scal(8, -2.0, xd, 0);
  EXPECT_EQ(device.calls, (std::vector<std::string>{"axpy/f32/4", "axpy/f64/3", "dot/f32/2", "dot/f64/2",
                                                    "asum/f32/5", "asum/f64/6", "scal/f32/7", "scal/f64/8"}));
}

}  // namespace
}  // namespace blobrt
