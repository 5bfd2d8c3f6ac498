// Value-parameterised suites run once per device this machine can open
// (blobrt::available_devices(): host, then every usable plugin's devices).
#ifndef BLOBRT_TESTS_BACKEND_PARAM_HPP
#define BLOBRT_TESTS_BACKEND_PARAM_HPP

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "blobrt/runtime.hpp"

namespace blobrt::testing {

inline std::string device_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// Selects the parameter's device before each test; blobs made in the test bind to it.
class OnEveryDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { select_backend(GetParam()); }
  Device& device() { return *current_device(); }
  bool unified() { return device().description().memory_model == blobrt::MemoryModel::kShared; }
};

// The devices a run was started for ($BLOBRT_TEST_EXPECT_DEVICES, ids separated by spaces)
// must each be one this process can open: a run filtered to their names (tests/meson.build's
// *_aliased) must not pass by selecting nothing. Skips where the variable is unset.
inline void expect_requested_devices() {
  const char* wanted = std::getenv("BLOBRT_TEST_EXPECT_DEVICES");
  if (!wanted) GTEST_SKIP() << "BLOBRT_TEST_EXPECT_DEVICES is not set";
  const std::vector<std::string> here = available_devices();
  std::istringstream ids(wanted);
  int count = 0;
  for (std::string id; ids >> id; ++count) {
    EXPECT_NE(std::find(here.begin(), here.end(), id), here.end()) << id << " was asked for and is not available";
  }
  EXPECT_GT(count, 0) << "BLOBRT_TEST_EXPECT_DEVICES names no device";
}

}  // namespace blobrt::testing

#define INSTANTIATE_ON_EVERY_DEVICE(Suite)                                                   \
  INSTANTIATE_TEST_SUITE_P(Devices, Suite, ::testing::ValuesIn(blobrt::available_devices()), \
                           blobrt::testing::device_test_name)

#endif
