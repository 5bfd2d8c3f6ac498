// Static destructors may use blobrt after main (device/exit_guard.hpp), on every device:
// the built-in host keeps working; a plugin device, closed by blobrt's exit handler before
// its libraries are torn down, refuses with a clear error; nothing crashes, and freeing
// a blob at exit calls no plugin. The sanitizer build checks the same for memory errors.
#include <gtest/gtest.h>

#include <string>

#include "backend_param.hpp"
#include "run_command.hpp"
#include "test_paths.hpp"

#ifndef BLOBRT_EXIT_ORDER_PROBE
#error "BLOBRT_EXIT_ORDER_PROBE must be defined by the build"
#endif

namespace blobrt {
namespace {

class ExitOrderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExitOrderTest, StaticDestructorUsesBlobsAfterMain) {
  std::string command = "'" + std::string(BLOBRT_TEST_PATH(BLOBRT_EXIT_ORDER_PROBE)) + "' " + GetParam() + " 2>&1";
  testing::CommandResult result = testing::run_command(command);
  const std::string& out = result.output;
  EXPECT_TRUE(result.exited_zero) << "status " << result.status << ": " << out;
  EXPECT_NE(out.find("main device=" + GetParam() + " asum=4096\n"), std::string::npos) << out;
  if (GetParam() == "host:0") {
    EXPECT_NE(out.find("at-exit kept=4096\n"), std::string::npos) << out;
    EXPECT_NE(out.find("at-exit fresh=1500\n"), std::string::npos) << out;
  } else {
    // Refused by name, with the reason, for the blob made in main and for a new one.
    std::string refused = GetParam() + " (";
    for (const char* step : {"at-exit kept error: ", "at-exit fresh error: "}) {
      std::size_t at = out.find(step);
      ASSERT_NE(at, std::string::npos) << out;
      std::string line = out.substr(at, out.find('\n', at) - at);
      EXPECT_NE(line.find(refused), std::string::npos) << line;
      EXPECT_NE(line.find("refused: the process is exiting"), std::string::npos) << line;
    }
  }
  EXPECT_NE(out.find("at-exit host=1500\n"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Devices, ExitOrderTest, ::testing::ValuesIn(blobrt::available_devices()),
                         blobrt::testing::device_test_name);

}  // namespace
}  // namespace blobrt
