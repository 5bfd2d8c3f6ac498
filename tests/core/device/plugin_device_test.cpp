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
  // Called anyway, the operation fails with the plugin's message and the device's name.
  DeviceBuffer b = device->allocate(80);
  double result = 0;
  try {
    device->asum(10, b, 0, &result);
    ADD_FAILURE() << "double asum on a device without fp64 did not throw";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("nofp64:0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dasum failed: no fp64"), std::string::npos) << e.what();
  }
  device->release(b);
}

}  // namespace
}  // namespace blobrt
