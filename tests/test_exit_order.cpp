// Static destructors may use blobrt after main (device/exit_guard.hpp), on every device:
// the built-in host keeps working; a plugin device, closed by blobrt's exit handler before
// its libraries are torn down, refuses with a clear error; nothing crashes, and freeing
// a blob at exit calls no plugin. The sanitizer build checks the same for memory errors.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "backend_param.hpp"
#include "test_paths.hpp"

#ifndef BLOBRT_EXIT_ORDER_PROBE
#error "BLOBRT_EXIT_ORDER_PROBE must be defined by the build"
#endif

namespace {

class ExitOrderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExitOrderTest, StaticDestructorUsesBlobsAfterMain) {
  std::string command = "'" + std::string(BLOBRT_TEST_PATH(BLOBRT_EXIT_ORDER_PROBE)) + "' " + GetParam() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
  int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << ": " << out;
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
