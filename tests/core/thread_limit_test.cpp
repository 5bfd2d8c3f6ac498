// When no thread can be started, blobrt's split kernels run on the calling thread instead
// of the process dying (parallel.hpp, thread_team.hpp), on host and blis; and
// BLOBRT_NUM_THREADS sets how many threads the team has (team_size.hpp).
#include <gtest/gtest.h>

#include <string>

#include "blobrt/runtime.hpp"
#include "run_command.hpp"
#include "test_paths.hpp"

#ifndef BLOBRT_THREAD_LIMIT_PROBE
#error "BLOBRT_THREAD_LIMIT_PROBE must be defined by the build"
#endif

// LeakSanitizer's exit-time tracer crashes ("Tracer caught signal 11") in a process that
// forked (popen) after loading the BLIS and OpenCL plugins; leaks are checked by every
// other suite, and AddressSanitizer's memory checks still run here.
extern "C" int __lsan_is_turned_off() { return 1; }

namespace {

TEST(ThreadLimitTest, MathRunsOnOneThreadWhenNoneCanStart) {
  for (const std::string backend : {"host", "blis"}) {
    if (backend == "blis") {
      bool found = false;
      for (const auto& p : blobrt::inventory().plugins) found |= p.name == "blis" && p.usable;
      if (!found) continue;
    }
    // LeakSanitizer needs a thread of its own at exit, which the limit forbids.
    // Added to the run's own ASAN_OPTIONS (the ASan run preloads libgomp and says so there).
    std::string command = "env ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" BLOBRT_BACKEND=" + backend +
                          " BLOBRT_PLUGIN_PROBE=inprocess '" +
                          BLOBRT_TEST_PATH(BLOBRT_THREAD_LIMIT_PROBE) + "' 2>&1";
    blobrt::testing::CommandResult result = blobrt::testing::run_command(command);
    const std::string& out = result.output;
    EXPECT_TRUE(result.exited_zero) << backend << ": status " << result.status << ": " << out;
    EXPECT_NE(out.find("threads_blocked=1"), std::string::npos) << backend << ": the limit did not bind: " << out;
    EXPECT_NE(out.find("device=" + backend + ":0 asum=8388608"), std::string::npos) << out;
  }
}

// The host device's team in a process of its own: BLOBRT_NUM_THREADS=N gives N - 1
// helpers; 1 gives none; a bad value is reported and ignored.
TEST(ThreadLimitTest, BlobrtNumThreadsSizesTheTeam) {
  // BLOBRT_LOG=warn: the report is a warning of the log, which the test environment turns off.
  auto run = [](const std::string& value) {
    return blobrt::testing::run_command("env BLOBRT_LOG=warn BLOBRT_BACKEND=host BLOBRT_NUM_THREADS=" + value + " '" +
                                        BLOBRT_TEST_PATH(BLOBRT_THREAD_LIMIT_PROBE) + "' --count-helpers 2>&1");
  };
  for (int threads : {1, 3, 5}) {
    blobrt::testing::CommandResult result = run(std::to_string(threads));
    EXPECT_TRUE(result.exited_zero) << result.output;
    EXPECT_NE(result.output.find("helpers=" + std::to_string(threads - 1) + "\n"), std::string::npos)
        << threads << " threads: " << result.output;
  }
  blobrt::testing::CommandResult bad = run("lots");
  EXPECT_TRUE(bad.exited_zero) << bad.output;
  EXPECT_NE(bad.output.find("[warn]: BLOBRT_NUM_THREADS='lots' is not a thread count"), std::string::npos)
      << bad.output;
}

}  // namespace
