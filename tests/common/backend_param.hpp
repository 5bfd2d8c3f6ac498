// Value-parameterised suites run once per device this machine can open
// (blobrt::available_devices(): host, then every usable plugin's devices).
#ifndef BLOBRT_TESTS_BACKEND_PARAM_HPP
#define BLOBRT_TESTS_BACKEND_PARAM_HPP

#include <gtest/gtest.h>

#include <string>

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

}  // namespace blobrt::testing

#define INSTANTIATE_ON_EVERY_DEVICE(Suite)                                                   \
  INSTANTIATE_TEST_SUITE_P(Devices, Suite, ::testing::ValuesIn(blobrt::available_devices()), \
                           blobrt::testing::device_test_name)

#endif
