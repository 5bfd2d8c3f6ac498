// blobrt-conformance: every Device operation on every device this machine can open,
// compared with the host reference (conformance/conformance_checks.hpp states the tolerances).
// Installed with the runtime so a node can check its own plugins:
//   blobrt-conformance                      # every device found
//   blobrt-conformance --gtest_filter='*cuda*'
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"
#include "conformance_checks.hpp"

namespace blobrt {
namespace {

using Param = std::tuple<std::string, conformance::Case>;

class Conformance : public ::testing::TestWithParam<Param> {};

TEST_P(Conformance, MatchesHostReference) {
  const auto& [id, c] = GetParam();
  // --fleet selects its cases by this name (conformance_fleet.cpp): it must stay GoogleTest's.
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  ASSERT_EQ(std::string(info->test_suite_name()) + "." + info->name(), conformance::kTestPrefix + conformance::param_name(id, c));
  std::shared_ptr<Device> device = open_device(id);
  conformance::Result result = conformance::run_case(*device, c);
  if (result.skipped) GTEST_SKIP() << result.detail;
  EXPECT_TRUE(result.passed) << id << " " << c.name() << ": " << result.detail;
}

std::string name_of(const ::testing::TestParamInfo<Param>& info) {
  return conformance::param_name(std::get<0>(info.param), std::get<1>(info.param));
}

// A device id as a test name: "opencl:0" becomes "opencl_0".
std::string device_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Conformance,
                         ::testing::Combine(::testing::ValuesIn(available_devices()),
                                            ::testing::ValuesIn(conformance::standard_cases())),
                         name_of);

// Bad arguments to gemm, gemv, elementwise and im2col are the same blobrt::Error on every device,
// raised before any plugin or kernel runs (core/src/device/math_checks.hpp).
class MathArguments : public ::testing::TestWithParam<std::string> {};

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const UnsupportedError& e) {
    return std::string("unsupported: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_P(MathArguments, AreCheckedTheSameWayOnEveryDevice) {
  std::shared_ptr<Device> device = open_device(GetParam());
  const std::string id = device->description().id();
  DeviceBuffer buffer = device->allocate(64 * sizeof(float));
  const auto f32 = Precision::kFloat32;
  auto expect = [&](const std::string& got, const std::string& part) {
    EXPECT_NE(got.find(id), std::string::npos) << got;
    EXPECT_NE(got.find(part), std::string::npos) << got;
  };
  expect(error_of([&] {
           device->gemm(f32, Transpose::kNo, Transpose::kNo, -1, 2, 2, 1.0, buffer, 0, buffer, 0, 0.0, buffer, 0);
         }),
         "sgemm with negative sizes m=-1 n=2 k=2");
  expect(error_of([&] {
           device->gemm(f32, Transpose::kNo, static_cast<Transpose>(7), 2, 2, 2, 1.0, buffer, 0, buffer, 0, 0.0,
                        buffer, 0);
         }),
         "unknown trans_b code 7");
  expect(error_of([&] {
           device->gemm(f32, Transpose::kNo, Transpose::kNo, 2, 2, 2, 1.0, nullptr, 0, buffer, 0, 0.0, buffer, 0);
         }),
         "no buffer for operand A");
  expect(error_of([&] { device->gemv(f32, Transpose::kYes, 2, -3, 1.0, buffer, 0, buffer, 0, 0.0, buffer, 0); }),
         "sgemv with negative sizes m=2 n=-3");
  expect(error_of([&] { device->gemv(f32, Transpose::kNo, 2, 3, 1.0, buffer, -1, buffer, 0, 0.0, buffer, 0); }),
         "negative offset");
  expect(error_of([&] {
           device->elementwise(f32, static_cast<ElementwiseOp>(99), 4, 0, 0, buffer, 0, buffer, 0, buffer, 0);
         }),
         "unknown element-wise operation code 99");
  expect(error_of([&] {
           device->elementwise(f32, ElementwiseOp::kAdd, 4, 0, 0, buffer, 0, nullptr, 0, buffer, 0);
         }),
         "element-wise add (float) with no buffer for operand b");
  expect(error_of([&] {
           device->elementwise(f32, ElementwiseOp::kSqr, -2, 0, 0, buffer, 0, nullptr, 0, buffer, 0);
         }),
         "element-wise sqr (float) with negative sizes n=-2");
  // im2col's own rule (its semantics' invalid()): a stride, kernel or dilation of 0.
  expect(error_of([&] { device->im2col(f32, 1, 4, 4, 3, 3, 1, 1, 0, 1, 1, 1, buffer, 0, buffer, 0); }),
         "sim2col channels=1 height=4 width=4 kernel_h=3 kernel_w=3 pad_h=1 pad_w=1 stride_h=0 stride_w=1 "
         "dilation_h=1 dilation_w=1: the stride must be at least 1");
  expect(error_of([&] { device->col2im(f32, 1, 4, 4, 3, 0, 1, 1, 1, 1, 1, 1, buffer, 0, buffer, 0); }),
         "scol2im channels=1 height=4 width=4 kernel_h=3 kernel_w=0");
  expect(error_of([&] { device->im2col(f32, 1, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, buffer, 0, nullptr, 0); }),
         "sim2col with no buffer for operand col");
  expect(error_of([&] {
           device->im2col(f32, std::int64_t(1) << 40, 1 << 20, 1 << 20, 3, 3, 1, 1, 1, 1, 1, 1, buffer, 0, buffer, 0);
         }),
         "the geometry's sizes overflow 64 bits");
  // im2col_3d's: a dilation of 0, a last output position whose coordinate passes 64 bits (the
  // output extents are the caller's), and a padding that passes them added to the image's
  // extent (col2im_3d's gather forms that sum).
  expect(error_of([&] {
           device->col2im_3d(f32, 1, 2, 4, 4, 2, 4, 4, 1, 3, 3, 0, 1, 1, 1, 1, 1, 1, 1, 0, buffer, 0, buffer, 0);
         }),
         "scol2im_3d channels=1 depth=2 height=4 width=4 out_depth=2 out_height=4 out_width=4 kernel_d=1 "
         "kernel_h=3 kernel_w=3 pad_d=0 pad_h=1 pad_w=1 stride_d=1 stride_h=1 stride_w=1 dilation_d=1 "
         "dilation_h=1 dilation_w=0: the dilation must be at least 1");
  expect(error_of([&] {
           device->im2col_3d(f32, 1, 1, 1, 4, 1, 1, std::int64_t(1) << 62, 1, 1, 3, 0, 0, 1, 1, 1, 4, 1, 1, 1, buffer, 0,
                             buffer, 0);
         }),
         "the geometry's sizes overflow 64 bits");
  expect(error_of([&] {
           device->col2im_3d(f32, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 0, 0, std::numeric_limits<std::int64_t>::max(), 1,
                             1, 1, 1, 1, 1, buffer, 0, buffer, 0);
         }),
         "the geometry's sizes overflow 64 bits");
  // ABI 1.6's rules: an ignore label that is not an int, dst rows that overlap, an even LRN
  // window, a rows' extent past 64 bits.
  expect(error_of([&] { device->softmax_loss(f32, 2, 3, 1, buffer, 0, buffer, 0, 2.5, buffer, 0); }),
         "ssoftmax_loss outer=2 channels=3 inner=1: ignore_label must be an int (or NaN: none)");
  expect(error_of([&] { device->copy_rows(f32, 3, 5, buffer, 0, 5, buffer, 20, 4); }),
         "scopy_rows rows=3 columns=5 src_stride=5 dst_stride=4: dst's rows overlap (columns > dst_stride)");
  expect(error_of([&] {
           device->copy_rows(f32, std::int64_t(1) << 40, 4, buffer, 0, std::int64_t(1) << 40, buffer, 0, 4);
         }),
         "the rows' extent overflows 64 bits");
  expect(error_of([&] { device->lrn_scale(f32, 1, 4, 4, 4, 0.25, 1.0, buffer, 0, buffer, 16); }),
         "slrn_scale outer=1 channels=4 inner=4 size=4: the window size must be odd");
  // Level 1 takes the same Precision: a code that is neither is refused before the plugin.
  expect(error_of([&] { device->axpy(static_cast<Precision>(7), 4, 1.0, buffer, 0, buffer, 0); }),
         "axpy with unknown precision code 7");
  expect(error_of([&] { (void)device->asum(static_cast<Precision>(-1), 4, buffer, 0); }),
         "asum with unknown precision code -1");
  // Nothing to do is not an error, and touches nothing (NULL operands included).
  EXPECT_NO_THROW(device->gemm(f32, Transpose::kNo, Transpose::kNo, 0, 5, 5, 1.0, nullptr, 0, nullptr, 0, 0.0,
                               nullptr, 0));
  EXPECT_NO_THROW(device->elementwise(f32, ElementwiseOp::kExp, 0, 0, 0, nullptr, 0, nullptr, 0, nullptr, 0));
  if (!device->description().supports_fp64) {
    const std::string e = error_of([&] {
      device->elementwise(Precision::kFloat64, ElementwiseOp::kSet, 4, 0, 0, nullptr, 0, nullptr, 0, buffer, 0);
    });
    EXPECT_EQ(e.rfind("unsupported: ", 0), 0u) << e;
    expect(e, "no double precision");
  }
  // A buffer smaller than the geometry needs: on a device whose handles are opaque (the
  // core cannot see a buffer's size through them) the plugin or the copies of the host path
  // refuse it; where handles are host pointers nothing can tell, as in Caffe.
  if (!device->description().addressable_handles) {
    const std::string e =
        error_of([&] { device->im2col(f32, 4, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, buffer, 0, buffer, 0); });
    EXPECT_NE(e, "(no error)");
    EXPECT_NE(e.find(id), std::string::npos) << e;
  }
  device->release(buffer);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, MathArguments, ::testing::ValuesIn(available_devices()),
                         device_name);

// Level 1's two spellings run the same routine on every device: Caffe's typed one (the
// device's typed slot, without a run-time precision branch on the host and plugin devices)
// and the Precision form give identical results, in both precisions.
class Level1Forms : public ::testing::TestWithParam<std::string> {};

template <typename T>
void expect_forms_agree(Device& device, Precision precision) {
  const std::int64_t n = 37;
  std::vector<T> x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<T>(0.25 * static_cast<double>(i % 7) - 0.6);
    y[i] = static_cast<T>(1.0 / static_cast<double>(i + 3));
  }
  const std::size_t bytes = n * sizeof(T);
  auto upload = [&](const std::vector<T>& v) {
    DeviceBuffer b = device.allocate(bytes);
    device.copy_to_device(v.data(), b, 0, bytes);
    return b;
  };
  auto download = [&](DeviceBuffer b) {
    std::vector<T> v(n);
    device.copy_to_host(b, 0, v.data(), bytes);
    return v;
  };
  DeviceBuffer bx = upload(x), by_typed = upload(y), by_precision = upload(y);
  const T alpha = static_cast<T>(0.7);
  device.axpy(n - 2, alpha, bx, 1, by_typed, 2);
  device.axpy(precision, n - 2, static_cast<double>(alpha), bx, 1, by_precision, 2);
  EXPECT_EQ(download(by_typed), download(by_precision)) << "axpy";
  device.scal(n - 1, alpha, by_typed, 1);
  device.scal(precision, n - 1, static_cast<double>(alpha), by_precision, 1);
  EXPECT_EQ(download(by_typed), download(by_precision)) << "scal";
  T typed = 0;
  device.dot(n - 1, bx, 1, by_typed, 0, &typed);
  EXPECT_EQ(static_cast<double>(typed), device.dot(precision, n - 1, bx, 1, by_typed, 0)) << "dot";
  device.asum(n - 3, by_typed, 3, &typed);
  EXPECT_EQ(static_cast<double>(typed), device.asum(precision, n - 3, by_typed, 3)) << "asum";
  for (DeviceBuffer b : {bx, by_typed, by_precision}) device.release(b);
}

TEST_P(Level1Forms, TypedAndPrecisionFormsAgree) {
  std::shared_ptr<Device> device = open_device(GetParam());
  expect_forms_agree<float>(*device, Precision::kFloat32);
  if (!device->description().supports_fp64) GTEST_SKIP() << GetParam() << " has no double precision";
  expect_forms_agree<double>(*device, Precision::kFloat64);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Level1Forms, ::testing::ValuesIn(available_devices()),
                         device_name);

// A plugin found but not usable here (e.g. cuda without a GPU) is reported as skipped
// with its reason, so a node's log says what it could not check.
class PluginNotUnderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PluginNotUnderTest, SkippedWithItsReason) {
  for (const PluginReport& p : inventory().plugins) {
    if (p.manifest == GetParam()) GTEST_SKIP() << p.name << ": " << p.reason;
  }
}

std::vector<std::string> unusable_plugins() {
  std::vector<std::string> manifests;
  for (const PluginReport& p : inventory().plugins) {
    if (!p.usable) manifests.push_back(p.manifest);
  }
  return manifests;
}

INSTANTIATE_TEST_SUITE_P(Found, PluginNotUnderTest, ::testing::ValuesIn(unusable_plugins()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(info.param.rfind('/') + 1);
                           for (char& ch : name) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PluginNotUnderTest);

// Names the devices under test, so a log shows what was (and was not) covered.
TEST(ConformanceCoverage, ListsDevicesUnderTest) {
  for (const std::string& id : available_devices()) {
    const DeviceDescription& d = open_device(id)->description();
    std::printf("device under test: %s (%s)\n", id.c_str(), d.name.c_str());
  }
  for (const PluginReport& p : inventory().plugins) {
    if (!p.usable) std::printf("not under test: %s: %s\n", p.name.c_str(), p.reason.c_str());
  }
  SUCCEED();
}

}  // namespace
}  // namespace blobrt
