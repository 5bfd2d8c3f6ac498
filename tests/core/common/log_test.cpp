// The log (blobrt/log.hpp): levels, the line prefix, BLOBRT_LOG_FILE, the handler API, and
// the warning when `auto` skips a plugin that drives an accelerator. What depends on the
// environment runs in a child: this same program, re-run with BLOBRT_TEST_LOG_CHILD set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "blobrt/log.hpp"
#include "blobrt/runtime.hpp"
#include "plugin_fixture.hpp"
#include "run_command.hpp"

namespace blobrt {
namespace {

int count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// What the child says: one message per level, after auto chose a backend twice.
TEST(LogChild, Emits) {
  if (!std::getenv("BLOBRT_TEST_LOG_CHILD")) GTEST_SKIP() << "run by the tests below";
  select_backend("auto");
  current_device();
  select_backend("auto");
  log_message(LogLevel::kError, "child error ", 1);
  log_message(LogLevel::kWarn, "child warn ", 2);
  log_message(LogLevel::kInfo, "child info ", 3);
  log_message(LogLevel::kDebug, "child debug ", 4);
}

// The same child with a handler: each message on stdout as "handled LEVEL: MESSAGE".
TEST(LogChild, Handled) {
  if (!std::getenv("BLOBRT_TEST_LOG_CHILD")) GTEST_SKIP() << "run by the tests below";
  set_log_handler([](LogLevel level, const std::string& message) {
    std::printf("handled %s: %s\n", to_string(level), message.c_str());
  });
  select_backend("auto");
  set_log_handler(nullptr);
}

std::string self() {
  char path[PATH_MAX] = {};
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

// Runs the child with `env` (assignments, or -u NAME) in front; stdout and stderr together.
// BLOBRT_LOG is unset unless `env` sets it; plugins come only from `plugins` ("" for none).
std::string child(const std::string& env, const std::string& plugins = "", const std::string& test = "Emits") {
  testing::CommandResult r = testing::run_command(
      "env -u BLOBRT_LOG -u BLOBRT_LOG_FILE -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID "
      "BLOBRT_TEST_LOG_CHILD=1 BLOBRT_PLUGIN_SYSTEM_PATH= BLOBRT_PLUGIN_PATH='" + plugins + "' " + env + " '" +
      self() + "' --gtest_filter=LogChild." + test + " 2>&1");
  EXPECT_TRUE(r.exited_zero) << r.output;
  return r.output;
}

TEST(LogLevels, ParsedCaseInsensitively) {
  EXPECT_EQ(parse_log_level("INFO"), LogLevel::kInfo);
  EXPECT_EQ(parse_log_level("Debug"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::kWarn);
  EXPECT_EQ(parse_log_level("WARNING"), LogLevel::kWarn);
  EXPECT_EQ(parse_log_level("error"), LogLevel::kError);
  EXPECT_EQ(parse_log_level("OFF"), LogLevel::kOff);
  EXPECT_FALSE(parse_log_level("bogus").has_value());
  EXPECT_FALSE(parse_log_level("").has_value());
  EXPECT_STREQ(to_string(LogLevel::kWarn), "warn");
}

TEST(LogLevels, DefaultIsWarn) {
  std::string out = child("");
  EXPECT_EQ(count(out, "[error]: child error 1"), 1) << out;
  EXPECT_EQ(count(out, "[warn]: child warn 2"), 1) << out;
  EXPECT_EQ(count(out, "[info]"), 0) << out;
  EXPECT_EQ(count(out, "[debug]"), 0) << out;
}

TEST(LogLevels, UpperCaseInfoWorks) {
  std::string out = child("BLOBRT_LOG=INFO");
  EXPECT_EQ(count(out, "[info]: child info 3"), 1) << out;
  EXPECT_EQ(count(out, "[info]: active device host:0"), 2) << out;
  EXPECT_EQ(count(out, "[debug]"), 0) << out;
}

TEST(LogLevels, DebugShowsEverything) {
  std::string out = child("BLOBRT_LOG=debug");
  EXPECT_EQ(count(out, "[debug]: child debug 4"), 1) << out;
  EXPECT_EQ(count(out, "[info]: child info 3"), 1) << out;
}

TEST(LogLevels, ErrorAndOff) {
  std::string errors = child("BLOBRT_LOG=Error");
  EXPECT_EQ(count(errors, "[error]: child error 1"), 1) << errors;
  EXPECT_EQ(count(errors, "[warn]"), 0) << errors;
  std::string off = child("BLOBRT_LOG=off");
  EXPECT_EQ(count(off, "blobrt 2"), 0) << off;  // no line with a prefix at all
}

TEST(LogLevels, BogusValueWarnsOnceAndKeepsWarn) {
  std::string out = child("BLOBRT_LOG=verbose");
  EXPECT_EQ(count(out, "BLOBRT_LOG='verbose' is not off, error, warn, info or debug; using warn"), 1) << out;
  EXPECT_EQ(count(out, "[warn]: child warn 2"), 1) << out;
  EXPECT_EQ(count(out, "[info]"), 0) << out;
}

TEST(LogPrefix, TimeHostPidAndRank) {
  std::string out = child("BLOBRT_LOG=info OMPI_COMM_WORLD_RANK=3");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::regex line("^blobrt \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z " + std::string(host) +
                        " pid (\\d+) rank 3 \\[warn\\]: child warn 2$");
  std::istringstream lines(out);
  int matched = 0;
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) {
      ++matched;
      EXPECT_GT(std::stol(m[1]), 0);
    }
  }
  EXPECT_EQ(matched, 1) << out;
  // The other launchers' variables, and none: no rank.
  EXPECT_EQ(count(child("PMI_RANK=12"), "rank 12 [warn]: child warn 2"), 1);
  EXPECT_EQ(count(child("SLURM_PROCID=7"), "rank 7 [warn]: child warn 2"), 1);
  std::string alone = child("");
  EXPECT_EQ(count(alone, " rank "), 0) << alone;
}

TEST(LogPrefix, OfThisProcess) {
  const std::string prefix = log_prefix(LogLevel::kInfo);
  EXPECT_EQ(prefix.rfind("blobrt 20", 0), 0u) << prefix;
  EXPECT_NE(prefix.find(" pid " + std::to_string(::getpid()) + " "), std::string::npos) << prefix;
  EXPECT_EQ(prefix.substr(prefix.size() - 9), " [info]: ") << prefix;
}

TEST(LogFile, AppendsInsteadOfStderr) {
  const std::string path = ::testing::TempDir() + "/blobrt_log_file_" + std::to_string(::getpid()) + ".log";
  std::remove(path.c_str());
  std::string first = child("BLOBRT_LOG_FILE=" + path);
  std::string second = child("BLOBRT_LOG_FILE=" + path + " BLOBRT_LOG=info");
  EXPECT_EQ(count(first + second, "child warn"), 0) << first << second;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(count(text.str(), "[warn]: child warn 2\n"), 2) << text.str();
  EXPECT_EQ(count(text.str(), "[info]: child info 3\n"), 1) << text.str();
  std::remove(path.c_str());
}

TEST(LogFile, UnopenableFileFallsBackToStderr) {
  std::string out = child("BLOBRT_LOG_FILE=/nonexistent-dir/blobrt.log");
  EXPECT_EQ(count(out, "BLOBRT_LOG_FILE=/nonexistent-dir/blobrt.log cannot be opened"), 1) << out;
  EXPECT_EQ(count(out, "[warn]: child warn 2"), 1) << out;
}

// The level and handler of this process, restored after each test.
class LogHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = log_level(); }
  void TearDown() override {
    set_log_handler(nullptr);
    set_log_level(saved_);
  }
  LogLevel saved_ = LogLevel::kOff;
};

TEST_F(LogHandlerTest, ReceivesMessagesAtTheLevelInForce) {
  std::vector<std::pair<LogLevel, std::string>> got;
  set_log_handler([&](LogLevel level, const std::string& message) { got.emplace_back(level, message); });
  set_log_level(LogLevel::kInfo);
  log_message(LogLevel::kInfo, "to the handler ", 42);
  log_message(LogLevel::kDebug, "not at info");
  log_message(LogLevel::kError, "an error");
  set_log_level(LogLevel::kOff);
  log_message(LogLevel::kError, "not when off");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, LogLevel::kInfo);
  EXPECT_EQ(got[0].second, "to the handler 42");  // the message alone, no prefix
  EXPECT_EQ(got[1].first, LogLevel::kError);
  EXPECT_EQ(got[1].second, "an error");
}

TEST_F(LogHandlerTest, LibraryMessagesReachIt) {
  std::vector<std::string> got;
  std::mutex m;
  set_log_handler([&](LogLevel, const std::string& message) {
    std::lock_guard<std::mutex> lock(m);
    got.push_back(message);
  });
  set_log_level(LogLevel::kInfo);
  select_backend("host");
  bool seen = false;
  for (const std::string& message : got) seen = seen || message.rfind("active device host:0", 0) == 0;
  EXPECT_TRUE(seen);
}

TEST_F(LogHandlerTest, ThreadSafeWhileReplacedAndMayLogItself) {
  set_log_level(LogLevel::kInfo);
  std::atomic<int> first{0}, second{0};
  auto counting = [](std::atomic<int>& n) {
    return [&n](LogLevel, const std::string& message) {
      ++n;
      if (message == "nested") return;
      if (message == "0:0") log_message(LogLevel::kInfo, "nested");  // a handler may log through blobrt
    };
  };
  set_log_handler(counting(first));
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kEach; ++i) log_message(LogLevel::kInfo, t, ":", i);
    });
  }
  for (int i = 0; i < 200; ++i) set_log_handler(counting(i % 2 ? first : second));
  for (std::thread& t : threads) t.join();
  set_log_handler(counting(first));
  EXPECT_EQ(first + second, kThreads * kEach + 1);
}

TEST_F(LogHandlerTest, AThrowingHandlerLosesOnlyItsMessage) {
  set_log_level(LogLevel::kInfo);
  int calls = 0;
  set_log_handler([&](LogLevel, const std::string&) {
    ++calls;
    throw std::runtime_error("the host logger failed");
  });
  EXPECT_NO_THROW(log_message(LogLevel::kInfo, "one"));
  EXPECT_NO_THROW(log_message(LogLevel::kInfo, "two"));
  EXPECT_EQ(calls, 2);
}

// auto skipping a plugin that drives an accelerator is a warning, once per process.
TEST(LogAutoSkip, WarnsWhenAnAcceleratorPluginIsSkipped) {
  testing::PluginDir dir("log_accel");
  dir.copy_module("zerodevices");
  dir.manifest("zerodevices", "libtest-zerodevices.so", "1.0", "accelerator = yes\n");
  dir.add("nofp64");
  std::string out = child("", dir.str());
  EXPECT_EQ(count(out, "[warn]: auto skipped a plugin that drives an accelerator: zerodevices (0 devices: "
                       "cudaGetDeviceCount: cudaErrorInsufficientDriver (simulated)); running on nofp64:0 (CPU)"),
            1)
      << out;
  std::string quiet = child("BLOBRT_LOG=error", dir.str());
  EXPECT_EQ(count(quiet, "auto skipped"), 0) << quiet;
}

TEST(LogAutoSkip, WarnsWhenAnAcceleratorPluginsDeviceWillNotOpen) {
  testing::PluginDir dir("log_accel_open");
  dir.copy_module("openrefuses");
  dir.manifest("openrefuses", "libtest-openrefuses.so", "1.0", "accelerator = yes\n");
  std::string out = child("BLOBRT_TEST_OPEN_REFUSES=1", dir.str());
  EXPECT_EQ(count(out, "[warn]: auto skipped a plugin that drives an accelerator: openrefuses (device 0 cannot be "
                       "opened: device busy"),
            1)
      << out;
  EXPECT_EQ(count(out, "running on host:0 (CPU)"), 1) << out;
}

TEST(LogAutoSkip, SilentOnACpuOnlyNode) {
  testing::PluginDir dir("log_cpu");
  dir.add("zerodevices");  // no `accelerator = yes`: nothing says it drives one
  dir.add("openrefuses");  // a CPU device that will not open
  dir.add("nofp64");
  std::string out = child("BLOBRT_TEST_OPEN_REFUSES=1 BLOBRT_LOG=info", dir.str());
  EXPECT_EQ(count(out, "[info]: auto: skipped openrefuses: device 0 cannot be opened"), 2) << out;  // it was tried
  EXPECT_EQ(count(out, "auto skipped"), 0) << out;
  EXPECT_EQ(count(out, "[warn]: child warn 2"), 1) << out;
  EXPECT_EQ(count(child(""), "auto skipped"), 0);  // and with no plugin at all
}

// A bad BLOBRT_NUM_THREADS or OMP_NUM_THREADS (team_size.hpp) is a warning of the log, once
// per process however many teams read it: prefixed, silenced below warn, in
// BLOBRT_LOG_FILE, and through the handler.
TEST(LogTeamSize, BadThreadCountIsAWarning) {
  const std::string said = "BLOBRT_NUM_THREADS='many' is not a thread count from 1 to 64; ignored";
  std::string out = child("BLOBRT_NUM_THREADS=many");
  const std::regex line("^blobrt \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z \\S+ pid \\d+ \\[warn\\]: " +
                        std::regex_replace(said, std::regex("[.'()]"), "\\$&") + "$");
  std::istringstream lines(out);
  int matched = 0;
  for (std::string l; std::getline(lines, l);) matched += std::regex_match(l, line);
  EXPECT_EQ(matched, 1) << out;
  EXPECT_EQ(count(out, "BLOBRT_NUM_THREADS"), 1) << out;
  EXPECT_EQ(count(child("OMP_NUM_THREADS=0"), "[warn]: OMP_NUM_THREADS='0' is not a thread count from 1 to 64"), 1);
  std::string quiet = child("BLOBRT_NUM_THREADS=many BLOBRT_LOG=error");
  EXPECT_EQ(count(quiet, "BLOBRT_NUM_THREADS"), 0) << quiet;
  EXPECT_EQ(count(child("BLOBRT_NUM_THREADS=4"), "BLOBRT_NUM_THREADS"), 0);
  std::string handled = child("BLOBRT_NUM_THREADS=many", "", "Handled");
  EXPECT_EQ(count(handled, "handled warn: " + said + "\n"), 1) << handled;
  EXPECT_EQ(count(handled, "blobrt 20"), 0) << handled;  // no prefix, nothing on stderr
}

TEST(LogTeamSize, BadThreadCountGoesToTheLogFile) {
  const std::string path = ::testing::TempDir() + "/blobrt_team_log_" + std::to_string(::getpid()) + ".log";
  std::remove(path.c_str());
  std::string out = child("BLOBRT_NUM_THREADS=0 BLOBRT_LOG_FILE=" + path);
  EXPECT_EQ(count(out, "BLOBRT_NUM_THREADS"), 0) << out;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(count(text.str(), "[warn]: BLOBRT_NUM_THREADS='0' is not a thread count from 1 to 64; ignored\n"), 1)
      << text.str();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace blobrt
