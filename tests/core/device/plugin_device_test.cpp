// Tests of core/src/device/plugin_device.cpp: a plugin's device as the core wraps it, checked by the
// conformance checks (conformance/): wrong results caught, no fp64 named.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"
#include "conformance_checks.hpp"
#include "discovery_fixture.hpp"
#include "plugin_device.hpp"

namespace blobrt {
namespace {

using namespace blobrt::testing;  // NOLINT(google-build-using-namespace): the fixtures
namespace fs = std::filesystem;

TEST(LoaderTest, ConformanceChecksCatchWrongResults) {
  PluginDir dir("wrong");
  dir.add("wrongaxpy");
  Discovery d = discover_in(dir.str());
  ASSERT_TRUE(only(d).usable);
  // Discovery loaded nothing: the plugin is loaded when a device is opened.
  ASSERT_EQ(d.loaded[0].table, nullptr);
  ASSERT_EQ(load_on_demand(d.loaded[0], d.inventory.plugins[0]), "");
  auto device = open_plugin_device(d.loaded[0].library, d.loaded[0].table, d.inventory.plugins[0].devices[0],
                                   false);
  conformance::Result axpy = conformance::run_case(*device, {conformance::Operation::kAxpy,
                                                              blobrt::Precision::kFloat32, 100, 3});
  EXPECT_FALSE(axpy.passed);
  EXPECT_NE(axpy.detail.find("axpy: element 3"), std::string::npos) << axpy.detail;
  conformance::Result dot = conformance::run_case(*device, {conformance::Operation::kDot,
                                                             blobrt::Precision::kFloat32, 100, 3});
  EXPECT_TRUE(dot.passed) << dot.detail;
}

TEST(LoaderTest, DeviceWithoutFp64SkipsDoubleWithItsName) {
  PluginDir dir("nofp64");
  dir.add("nofp64");
  Discovery d = discover_in(dir.str());
  // Discovery loaded nothing: the plugin is loaded when a device is opened.
  ASSERT_EQ(d.loaded[0].table, nullptr);
  ASSERT_EQ(load_on_demand(d.loaded[0], d.inventory.plugins[0]), "");
  auto device = open_plugin_device(d.loaded[0].library, d.loaded[0].table, d.inventory.plugins[0].devices[0],
                                   false);
  conformance::Result r = conformance::run_case(*device, {conformance::Operation::kAsum,
                                                           blobrt::Precision::kFloat64, 10, 0});
  EXPECT_TRUE(r.skipped);
  EXPECT_NE(r.detail.find("no fp64"), std::string::npos);
  // Called anyway, in either spelling of level 1, the core refuses it, naming the device and
  // the routine, before the plugin (whose own refusal says "simulated device") sees it.
  DeviceBuffer b = device->allocate(80);
  auto expect_refused = [](const auto& call, const char* routine) {
    try {
      call();
      ADD_FAILURE() << routine << " in double on a device without fp64 did not throw";
    } catch (const UnsupportedError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("nofp64:0"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string(routine) + " refused: the device has no double precision"), std::string::npos)
          << what;
      EXPECT_EQ(what.find("simulated device"), std::string::npos) << "the plugin was called: " << what;
    }
  };
  double result = 0;
  expect_refused([&] { device->asum(10, b, 0, &result); }, "dasum");
  expect_refused([&] { device->axpy(10, 2.0, b, 0, b, 0); }, "daxpy");
  expect_refused([&] { device->dot(Precision::kFloat64, 10, b, 0, b, 0); }, "dot");
  expect_refused([&] { device->scal(Precision::kFloat64, 10, 2.0, b, 0); }, "scal");
  device->release(b);
}

// n <= 0 is nothing to do, answered by the plugin as BLAS does (plugin_abi.h): libblobrt
// passes it on in both spellings, with no test of its own, and nothing is written.
TEST(LoaderTest, EmptyLevelOneCallsAreNothingToDo) {
  PluginDir dir("empty");
  dir.add("nofp64");
  Discovery d = discover_in(dir.str());
  ASSERT_EQ(load_on_demand(d.loaded[0], d.inventory.plugins[0]), "");
  auto device = open_plugin_device(d.loaded[0].library, d.loaded[0].table, d.inventory.plugins[0].devices[0],
                                   false);
  std::vector<float> x{1, 2, 3}, y{4, 5, 6};
  DeviceBuffer bx = device->allocate(sizeof(float) * 3), by = device->allocate(sizeof(float) * 3);
  device->copy_to_device(x.data(), bx, 0, sizeof(float) * 3);
  device->copy_to_device(y.data(), by, 0, sizeof(float) * 3);
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{-3}}) {
    float result = 7;
    device->axpy(n, 2.0f, bx, 0, by, 0);
    device->scal(n, 2.0f, by, 0);
    device->dot(n, bx, 0, by, 0, &result);
    EXPECT_EQ(result, 0.0f) << n;
    result = 7;
    device->asum(n, bx, 0, &result);
    EXPECT_EQ(result, 0.0f) << n;
    device->axpy(Precision::kFloat32, n, 2.0, bx, 0, by, 0);
    device->scal(Precision::kFloat32, n, 2.0, by, 0);
    EXPECT_EQ(device->dot(Precision::kFloat32, n, bx, 0, by, 0), 0.0) << n;
    EXPECT_EQ(device->asum(Precision::kFloat32, n, bx, 0), 0.0) << n;
  }
  std::vector<float> after(3);
  device->copy_to_host(by, 0, after.data(), sizeof(float) * 3);
  EXPECT_EQ(after, y);
  device->release(bx);
  device->release(by);
}

}  // namespace
}  // namespace blobrt
