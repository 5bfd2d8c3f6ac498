// Tests of core/src/plugins/child_probe.cpp: plugins probed in a child (crash, exit, hang in init or
// open) and the scanner protocol (private pipe, output tail, deadline, foreign protocol, the
// answer's fields).
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
#include "discovery_fixture.hpp"

namespace blobrt {
namespace {

using namespace blobrt::testing;  // NOLINT(google-build-using-namespace): the fixtures
namespace fs = std::filesystem;

TEST(LoaderTest, PluginThatCrashesWhileProbedIsReportedNotFatal) {
  PluginDir dir("crash");
  dir.add("crashes");
  // SIGSEGV, or SIGABRT when a sanitizer's handler catches the fault first.
  PluginReport r = only(discover_in(dir.str()));
  EXPECT_REASON(r, "crashed while being probed (SIG");
  EXPECT_REASON(r, " in a child process)");
}

// open() is probed in the child too: a plugin that crashes or exits when a device is
// opened is reported, and the process that asked never calls its open().
TEST(LoaderTest, PluginThatCrashesOrExitsInOpenIsReportedNotFatal) {
  PluginDir dir("opencrash");
  dir.add("opencrashes");
  dir.add("openexits");
  Discovery d = discover_in(dir.str());
  ASSERT_EQ(d.inventory.plugins.size(), 2u);
  EXPECT_REASON(d.inventory.plugins[0], "crashed while being probed (SIG");
  EXPECT_REASON(d.inventory.plugins[1], "exited with status 7 while being probed (in a child process)");
  EXPECT_FALSE(d.inventory.plugins[0].usable);
  EXPECT_FALSE(d.inventory.plugins[1].usable);
  PluginDir hangs("openhang");
  hangs.add("openhangs");
  ::setenv("BLOBRT_PLUGIN_PROBE_TIMEOUT", "1", 1);
  PluginReport r = only(discover_in(hangs.str()));
  ::unsetenv("BLOBRT_PLUGIN_PROBE_TIMEOUT");
  EXPECT_REASON(r, "hung while being probed (no answer within 1 s");
}

TEST(LoaderTest, PluginThatHangsWhileProbedIsKilledAfterTheLimit) {
  PluginDir dir("hang");
  dir.add("hangs");
  ::setenv("BLOBRT_PLUGIN_PROBE_TIMEOUT", "1", 1);
  auto start = std::chrono::steady_clock::now();
  PluginReport r = only(discover_in(dir.str()));
  ::unsetenv("BLOBRT_PLUGIN_PROBE_TIMEOUT");
  EXPECT_REASON(r, "hung while being probed (no answer within 1 s");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The scanner protocol (child_probe.hpp): the answer comes on a private pipe, so what a
// plugin prints on stdout or stderr is never taken for it.
TEST(ScannerProtocolTest, PluginOutputIsNotTakenForTheAnswer) {
  PluginDir dir("noisy");
  dir.add("noisy");
  PluginReport r = only(discover_in(dir.str()));
  EXPECT_TRUE(r.usable) << r.reason;
  EXPECT_EQ(r.devices.size(), 1u);
}

TEST(ScannerProtocolTest, CrashReasonEndsWithThePluginsLastOutput) {
  PluginDir dir("crash_tail");
  dir.add("crashes");
  PluginReport r = only(discover_in(dir.str()));
  EXPECT_REASON(r, "crashed while being probed (SIG");
  EXPECT_REASON(r, "its last output: \"");
  // Under AddressSanitizer the fault ends in its report (SIGABRT), which comes last.
  if (r.reason.find("(SIGSEGV") != std::string::npos) {
    EXPECT_REASON(r, "test plugin: simulated driver fault at 0xdead");
  } else {
    EXPECT_REASON(r, "AddressSanitizer");
  }
}

TEST(ScannerProtocolTest, ScannerOfAnotherProtocolIsNotTrusted) {
  // It answers with protocol 99: the plugin is probed in this process instead.
  FakeScanner fake("protocol99", "printf 'blobrt-plugin-scanner protocol=99\\nusable=0\\nreason=from v99\\nend\\n' >&3");
  PluginDir dir("protocol99");
  dir.add("nofp64");
  ::setenv("BLOBRT_PLUGIN_CACHE", "off", 1);
  PluginReport r = only(discover_in(dir.str()));
  ::unsetenv("BLOBRT_PLUGIN_CACHE");
  EXPECT_TRUE(r.usable) << r.reason;
}

TEST(ScannerProtocolTest, ChildThatClosesItsPipesAndHangsIsKilledAtTheDeadline) {
  FakeScanner fake("closes_and_hangs", "exec 3>&- 1>&- 2>&-\nexec sleep 60");
  PluginDir dir("closes_and_hangs");
  dir.add("nofp64");
  ::setenv("BLOBRT_PLUGIN_PROBE_TIMEOUT", "1", 1);
  ::setenv("BLOBRT_PLUGIN_CACHE", "off", 1);
  auto start = std::chrono::steady_clock::now();
  PluginReport r = only(discover_in(dir.str()));
  ::unsetenv("BLOBRT_PLUGIN_PROBE_TIMEOUT");
  ::unsetenv("BLOBRT_PLUGIN_CACHE");
  EXPECT_REASON(r, "hung while being probed (no answer within 1 s");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// A process the plugin left behind may keep the output pipe open: once the answer is in,
// its output gets a short grace, not the whole deadline.
TEST(ScannerProtocolTest, LeftoverProcessHoldingTheOutputDoesNotStallTheProbe) {
  const char* real = std::getenv("BLOBRT_PLUGIN_SCANNER");
  ASSERT_NE(real, nullptr);
  FakeScanner fake("leftover", "sleep 5 3>&- &\nexec '" + std::string(real) + "' \"$@\"");
  PluginDir dir("leftover");
  dir.add("nofp64");
  ::setenv("BLOBRT_PLUGIN_PROBE_TIMEOUT", "4", 1);
  ::setenv("BLOBRT_PLUGIN_CACHE", "off", 1);
  auto start = std::chrono::steady_clock::now();
  PluginReport r = only(discover_in(dir.str()));
  ::unsetenv("BLOBRT_PLUGIN_PROBE_TIMEOUT");
  ::unsetenv("BLOBRT_PLUGIN_CACHE");
  EXPECT_TRUE(r.usable) << r.reason;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(ScannerProtocolTest, TruncatedAnswerIsNotTakenForAVerdict) {
  FakeScanner fake("truncated", "printf 'blobrt-plugin-scanner protocol=" + std::to_string(kScannerProtocol) +
                                     "\\nstatus=usable\\n' >&3\nexit 3");
  PluginDir dir("truncated");
  dir.add("nofp64");
  ::setenv("BLOBRT_PLUGIN_CACHE", "off", 1);
  PluginReport r = only(discover_in(dir.str()));
  ::unsetenv("BLOBRT_PLUGIN_CACHE");
  EXPECT_REASON(r, "the plugin scanner stopped in the middle of its answer (exit status 3)");
}

// The scanner's answer carries each device's whole description and a status code, and
// libblobrt reads back exactly what was written (text fields on one line).
TEST(ScannerProtocolTest, AnswerCarriesEveryDeviceFieldAndAStatus) {
  ProbeVerdict sent;
  sent.status = ProbeStatus::kUsable;
  sent.library_version = "lib 2.1";
  DeviceDescription d;
  d.index = 1;
  d.name = "Tab\tand\nbreak";
  d.details = "driver 9; OpenCL 3.0";
  d.memory_bytes = 123456789012ULL;
  d.kind = DeviceKind::kAccelerator;
  d.memory_model = MemoryModel::kAliased;
  d.native_type = NativeDeviceType::kOpenCL;
  d.native_index = 3;
  d.addressable_handles = false;
  d.supports_fp64 = false;
  d.has_pinned_host = true;
  d.view_alignment = 128;
  sent.devices = {d, d};
  sent.devices[0].index = 0;
  sent.devices[0].kind = DeviceKind::kGpu;
  sent.devices[0].memory_model = MemoryModel::kSeparate;
  sent.devices[0].native_type = NativeDeviceType::kCuda;
  sent.devices[0].native_index = 1;
  sent.devices[0].addressable_handles = true;
  sent.objects = {"/lib/a.so", "/lib/b.so"};
  const std::string answer = encode_probe_result(sent);
  EXPECT_EQ(answer.rfind("blobrt-plugin-scanner protocol=" + std::to_string(kScannerProtocol) + "\nstatus=usable\n", 0),
            0u) << answer;
  std::optional<ProbeVerdict> got = decode_probe_result(answer);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, ProbeStatus::kUsable);
  EXPECT_EQ(got->library_version, "lib 2.1");
  EXPECT_EQ(got->objects, sent.objects);
  sent.devices[0].name = sent.devices[1].name = "Tab and break";
  expect_same_devices(got->devices, sent.devices, "round trip");
  for (ProbeStatus status : {ProbeStatus::kNoDevice, ProbeStatus::kWillNotOpen, ProbeStatus::kNotLoadable,
                             ProbeStatus::kInitFailed}) {
    ProbeVerdict v;
    v.status = status;
    v.reason = "why";
    std::optional<ProbeVerdict> back = decode_probe_result(encode_probe_result(v));
    ASSERT_TRUE(back) << to_string(status);
    EXPECT_EQ(back->status, status);
    EXPECT_EQ(back->reason, "why");
  }
  EXPECT_FALSE(decode_probe_result("blobrt-plugin-scanner protocol=4\nstatus=fine\nend\n"));
  EXPECT_FALSE(decode_probe_result("blobrt-plugin-scanner protocol=4\nreason=no status\nend\n"));
  EXPECT_FALSE(decode_probe_result("blobrt-plugin-scanner protocol=4\nstatus=usable\ndevice=0\tcpu\tx\nend\n"));
  // A whole device line reads; the same line with a memory model that is not one does not.
  const std::string head = "blobrt-plugin-scanner protocol=4\nstatus=usable\ndevice=0\tcpu\t1\t";
  const std::string tail = "\t1\t0\t1\t1\t0\t64\tname\tdetails\nend\n";
  std::optional<ProbeVerdict> shared = decode_probe_result(head + "shared" + tail);
  ASSERT_TRUE(shared);
  ASSERT_EQ(shared->devices.size(), 1u);
  EXPECT_EQ(shared->devices[0].memory_model, MemoryModel::kShared);
  EXPECT_EQ(shared->devices[0].native_type, NativeDeviceType::kCpu);
  EXPECT_TRUE(shared->devices[0].addressable_handles);
  EXPECT_FALSE(decode_probe_result(head + "unified" + tail));
}

}  // namespace
}  // namespace blobrt
