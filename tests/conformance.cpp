// blobrt-conformance: every Device operation on every device this machine can open,
// compared with the host reference (tools/conformance_checks.hpp states the tolerances).
// Installed with the runtime so a node can check its own plugins:
//   blobrt-conformance                      # every device found
//   blobrt-conformance --gtest_filter='*cuda*'
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "blobrt/runtime.hpp"
#include "conformance_checks.hpp"

namespace blobrt {
namespace {

using Param = std::tuple<std::string, conformance::Case>;

class Conformance : public ::testing::TestWithParam<Param> {};

TEST_P(Conformance, MatchesHostReference) {
  const auto& [id, c] = GetParam();
  std::shared_ptr<Device> device = open_device(id);
  conformance::Result result = conformance::run_case(*device, c);
  if (result.skipped) GTEST_SKIP() << result.detail;
  EXPECT_TRUE(result.passed) << id << " " << c.name() << ": " << result.detail;
}

std::string name_of(const ::testing::TestParamInfo<Param>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param).name();
  for (char& ch : name) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Conformance,
                         ::testing::Combine(::testing::ValuesIn(available_devices()),
                                            ::testing::ValuesIn(conformance::standard_cases())),
                         name_of);

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
