// The loader survives every kind of broken plugin and says why it skipped each one.
#include <cstring>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <cstdlib>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <optional>

#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"
#include "child_probe.hpp"
#include "conformance_checks.hpp"
#include "loader.hpp"
#include "manifest.hpp"
#include "plugin_device.hpp"
#include "plugin_fixture.hpp"

namespace blobrt {
namespace {

using testing::PluginDir;
namespace fs = std::filesystem;

// Runs discovery over exactly these directories.
Discovery discover_in(const std::string& path) {
  ::setenv("BLOBRT_PLUGIN_PATH", path.c_str(), 1);
  ::setenv("BLOBRT_PLUGIN_SYSTEM_PATH", "", 1);
  return discover_plugins();
}

// A copy: the Discovery is often a temporary.
PluginReport only(const Discovery& d) {
  EXPECT_EQ(d.inventory.plugins.size(), 1u);
  return d.inventory.plugins.empty() ? PluginReport{} : d.inventory.plugins[0];
}

#define EXPECT_REASON(report, text)                                              \
  do {                                                                           \
    EXPECT_FALSE((report).usable);                                               \
    EXPECT_NE((report).reason.find(text), std::string::npos) << (report).reason; \
  } while (0)

TEST(ManifestTest, ParsesEveryKey) {
  Manifest m = parse_manifest(
      "# comment\n\nname = cuda\nlibrary = libblobrt-cuda.so\nabi = 1.3\npriority = 400\n"
      "requires = libcudart.so.13 libcublas.so.13\nlibrary_path = ../../nvidia/cu13/lib /opt/cuda/lib64\n"
      "depends_on_files = /etc/OpenCL/vendors /dev/x\ndepends_on_env = CUDA_* OCL_ICD_VENDORS\n");
  EXPECT_EQ(m.depends_on_files, (std::vector<std::string>{"/etc/OpenCL/vendors", "/dev/x"}));
  EXPECT_EQ(m.depends_on_env, (std::vector<std::string>{"CUDA_*", "OCL_ICD_VENDORS"}));
  EXPECT_EQ(m.name, "cuda");
  EXPECT_EQ(m.library, "libblobrt-cuda.so");
  EXPECT_EQ(m.abi_major, 1);
  EXPECT_EQ(m.abi_minor, 3);
  EXPECT_EQ(m.priority, 400);
  EXPECT_EQ(m.required_libraries, (std::vector<std::string>{"libcudart.so.13", "libcublas.so.13"}));
  EXPECT_EQ(m.library_path, (std::vector<std::string>{"../../nvidia/cu13/lib", "/opt/cuda/lib64"}));
}

TEST(ManifestTest, RejectsMalformedInput) {
  auto message = [](const std::string& text) {
    try {
      parse_manifest(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message("name = x\nlibrary = l.so\n"), "missing 'abi'");
  EXPECT_EQ(message("library = l.so\nabi = 1.0\n"), "missing 'name'");
  EXPECT_EQ(message("name = x\nabi = 1.0\n"), "missing 'library'");
  EXPECT_EQ(message("name = x\njunk\n"), "line 2: expected 'key = value'");
  EXPECT_EQ(message("name = Bad Name\n"), "line 1: name 'Bad Name' is not [a-z0-9_-]{1,32}");
  EXPECT_NE(message("name = x\nlibrary = ../evil.so\n").find("manifest's own directory"), std::string::npos);
  EXPECT_NE(message("name = x\nlibrary = /lib/evil.so\n").find("manifest's own directory"), std::string::npos);
  EXPECT_NE(message("name = x\nabi = one\n").find("not MAJOR.MINOR"), std::string::npos);
  EXPECT_NE(message("name = x\nabi = 1.x\n").find("abi minor"), std::string::npos);
  EXPECT_NE(message("name = x\npriority = 99999999999\n").find("priority"), std::string::npos);
  EXPECT_NE(message("name = x\ncolour = red\n").find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(message("requires = a/b.so\n").find("must be a file name"), std::string::npos);
  EXPECT_EQ(message("depends_on_files = etc/x\n"), "line 1: depends_on_files 'etc/x' is not an absolute path");
  EXPECT_EQ(message("depends_on_env = A-B\n"), "line 1: depends_on_env 'A-B' is not a variable name (NAME or NAME*)");
  EXPECT_NE(message("depends_on_env = *\n").find("not a variable name"), std::string::npos);
}

// A NUL (or any unprintable byte) in a value used to end the reason where it stood: the
// message quoted the value as it was, and whoever passed it on as a C string lost the rest,
// "what is wrong" included. Quoted as \xNN, the whole reason arrives.
TEST(ManifestTest, UnprintableBytesInAValueAreQuotedNotCutOff) {
  const std::string text("name = x\nlibrary = lib\0evil.so\nabi = 1.0\n", 41);
  std::string what;
  try {
    parse_manifest(text);
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_EQ(std::strlen(what.c_str()), what.size()) << "the message holds a NUL";
  EXPECT_EQ(what, "line 2: library 'lib\\x00evil.so' must be a file name in the manifest's own directory");

  PluginDir dir("nulbyte");
  dir.copy_module("nofp64");
  dir.manifest("nofp64", std::string("libtest-nofp64.so\0\x1b[2J", 22));
  const PluginReport r = only(discover_in(dir.str()));
  EXPECT_FALSE(r.usable);
  EXPECT_REASON(r, "\\x00\\x1b[2J' must be a file name in the manifest's own directory");
}

TEST(LoaderTest, NonexistentDirectoryIsListedNotFatal) {
  Discovery d = discover_in("/nonexistent/blobrt/plugins.d");
  ASSERT_EQ(d.inventory.directories.size(), 1u);
  EXPECT_FALSE(d.inventory.directories[0].exists);
  EXPECT_EQ(d.inventory.directories[0].origin, "BLOBRT_PLUGIN_PATH");
  EXPECT_TRUE(d.inventory.plugins.empty());
}

TEST(LoaderTest, SystemPathDefaultsToTheInstalledDirectory) {
  ::unsetenv("BLOBRT_PLUGIN_SYSTEM_PATH");
  ::setenv("BLOBRT_PLUGIN_PATH", "/a:/b::/c", 1);
  auto dirs = plugin_search_path();
  // A relocated install (a wheel, a moved bundle) adds the plugins.d beside libblobrt.
  ASSERT_GE(dirs.size(), 4u);
  ASSERT_LE(dirs.size(), 5u);
  EXPECT_EQ(dirs[0].path, "/a");
  EXPECT_EQ(dirs[2].path, "/c");
  // The copy beside this libblobrt comes before the configured one (which may hold a
  // system install of another version).
  if (dirs.size() == 5) {
    EXPECT_EQ(dirs[3].origin, "next to libblobrt");
    EXPECT_TRUE(dirs[3].exists);
  }
  EXPECT_EQ(dirs.back().origin, "installed");
}

TEST(LoaderTest, WorkingPluginIsUsable) {
  PluginDir dir("good");
  dir.add("nofp64");
  const PluginReport r = only(discover_in(dir.str()));
  EXPECT_TRUE(r.usable) << r.reason;
  EXPECT_EQ(r.library_version, "test plugin 1.0");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].memory_model, MemoryModel::kSeparate);
  // A plugin that does not say what it natively is (as before ABI 1.3), with opaque handles:
  // unknown, and no arithmetic on its handles.
  EXPECT_EQ(r.devices[0].native_type, NativeDeviceType::kUnknown);
  EXPECT_FALSE(r.devices[0].addressable_handles);
  EXPECT_FALSE(r.devices[0].supports_fp64);
}

TEST(LoaderTest, MissingLibraryFile) {
  PluginDir dir("missing");
  dir.manifest("ghostly", "libnot-there.so");
  EXPECT_REASON(only(discover_in(dir.str())), "library file not found");
}

// Selection reads what the manifest declares from the report (auto's warning about a
// skipped accelerator plugin), never the manifest again: an unusable plugin carries it too.
TEST(LoaderTest, ManifestAcceleratorReachesTheReport) {
  PluginDir dir("declares");
  dir.manifest("gpuish", "libnot-there.so", "1.0", "accelerator = yes\n");
  dir.manifest("plain", "libnot-there-either.so");
  const Discovery d = discover_in(dir.str());
  ASSERT_EQ(d.inventory.plugins.size(), 2u);
  EXPECT_EQ(d.inventory.plugins[0].name, "gpuish");
  EXPECT_FALSE(d.inventory.plugins[0].usable);
  EXPECT_TRUE(d.inventory.plugins[0].accelerator);
  EXPECT_EQ(d.inventory.plugins[1].name, "plain");
  EXPECT_FALSE(d.inventory.plugins[1].accelerator);
}

TEST(LoaderTest, NotASharedObject) {
  PluginDir dir("notso");
  dir.write("libtext.so", "this is a text file, not an ELF object\n");
  dir.manifest("text", "libtext.so");
  EXPECT_REASON(only(discover_in(dir.str())), "not a shared object");
}

TEST(LoaderTest, NoEntryPoint) {
  PluginDir dir("noentry");
  dir.add("noentry");
  EXPECT_REASON(only(discover_in(dir.str())), "no entry point blobrt_plugin_entry_v1");
}

TEST(LoaderTest, ManifestAbiIsCheckedBeforeAnyPluginCodeRuns) {
  std::string marker = ::testing::TempDir() + "/blobrt_marker_" + std::to_string(::getpid());
  ::setenv("BLOBRT_TEST_MARKER", marker.c_str(), 1);
  std::filesystem::remove(marker);
  {
    PluginDir dir("abi2");
    dir.copy_module("marker");
    dir.manifest("marker", "libtest-marker.so", "2.0");
    const PluginReport r = only(discover_in(dir.str()));
    EXPECT_REASON(r, "manifest declares ABI 2.0, this blobrt speaks 1." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR));
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the plugin's code ran despite its ABI";
  }
  {
    // Control: with the right ABI the same module's constructor does run.
    PluginDir dir("abi1");
    dir.copy_module("marker");
    dir.manifest("marker", "libtest-marker.so", "1.0");
    EXPECT_TRUE(only(discover_in(dir.str())).usable);
    EXPECT_TRUE(std::filesystem::exists(marker));
  }
  ::unsetenv("BLOBRT_TEST_MARKER");
}

// Two providers of one name, the first of another ABI major (a newer blobrt's plugin wheel
// before this blobrt's .deb): it is reported and not loaded, and the second one is used
// rather than shadowed by a plugin that can never load.
TEST(LoaderTest, APluginOfAnotherAbiMajorDoesNotShadowOneThatLoads) {
  PluginDir newer("abi2first");
  newer.copy_module("marker");
  newer.manifest("marker", "libtest-marker.so", "2.0");
  PluginDir current("abi1second");
  current.copy_module("marker");
  current.manifest("marker", "libtest-marker.so", "1.0");
  const Discovery d = discover_in(newer.str() + ":" + current.str());
  ASSERT_EQ(d.inventory.plugins.size(), 2u);
  EXPECT_REASON(d.inventory.plugins[0], "manifest declares ABI 2.0");
  EXPECT_EQ(d.inventory.plugins[0].status, PluginStatus::kNotLoadable);
  EXPECT_TRUE(d.inventory.plugins[1].usable) << d.inventory.plugins[1].reason;
}

TEST(LoaderTest, TableWithAnotherAbi) {
  PluginDir dir("tableabi");
  dir.add("tableabi");
  EXPECT_REASON(only(discover_in(dir.str())), "function table reports ABI 2." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR));
}

TEST(LoaderTest, TableTooSmall) {
  PluginDir dir("small");
  dir.add("smalltable");
  EXPECT_REASON(only(discover_in(dir.str())), "struct_size 16 is smaller than");
}

TEST(LoaderTest, TableMissingAnOperation) {
  PluginDir dir("nullop");
  dir.add("nullop");
  EXPECT_REASON(only(discover_in(dir.str())), "lacks required operation 'sdot'");
}

TEST(LoaderTest, TableNamesAnotherBackend) {
  PluginDir dir("rename");
  dir.copy_module("nofp64");
  dir.manifest("impostor", "libtest-nofp64.so");
  EXPECT_REASON(only(discover_in(dir.str())), "names backend 'nofp64' but the manifest says 'impostor'");
}

TEST(LoaderTest, InitialisationFailure) {
  PluginDir dir("init");
  dir.add("initfails");
  EXPECT_REASON(only(discover_in(dir.str())),
                "initialisation failed: simulated driver initialisation failure (code 42)");
}

TEST(LoaderTest, ZeroDevicesCarryTheirReason) {
  PluginDir dir("zero");
  dir.add("zerodevices");
  const PluginReport r = only(discover_in(dir.str()));
  EXPECT_REASON(r, "0 devices: cudaGetDeviceCount: cudaErrorInsufficientDriver (simulated)");
  EXPECT_TRUE(r.devices.empty());
}

TEST(LoaderTest, DependencyNamedInTheManifestIsMissing) {
  PluginDir dir("dep");
  dir.copy_module("nofp64");
  dir.manifest("nofp64", "libtest-nofp64.so", "1.0", "requires = libc.so.6 libcudart-missing.so.13\n");
  const PluginReport r = only(discover_in(dir.str()));
  EXPECT_REASON(r, "missing dependency libcudart-missing.so.13");
  // The dynamic linker's own words, not Boost.DLL's retry ("Bad file descriptor").
  EXPECT_REASON(r, "libcudart-missing.so.13: cannot open shared object file");
  EXPECT_EQ(r.reason.find("Bad file descriptor"), std::string::npos) << r.reason;
}

// A plugin wheel's manifest names where pip puts the libraries it requires (library_path,
// relative to the manifest): found there, the plugin is usable; the same manifest without
// it reports the library missing, and says it looked in library_path too.
TEST(LoaderTest, RequiredLibraryIsLookedForInTheManifestsLibraryPath) {
  PluginDir dir("libpath");
  dir.copy_module("nofp64");
  fs::create_directories(fs::path(dir.str()) / "deps");
  // Any loadable shared object will do as the dependency: the test plugin itself.
  fs::copy_file(fs::path(BLOBRT_TEST_PATH(BLOBRT_TEST_PLUGINS_DIR)) / "libtest-nofp64.so",
                fs::path(dir.str()) / "deps" / "libblobrt-libpath-dep.so.7");
  dir.manifest("nofp64", "libtest-nofp64.so", "1.0", "requires = libblobrt-libpath-dep.so.7\nlibrary_path = deps\n");
  const PluginReport found = only(discover_in(dir.str()));
  EXPECT_TRUE(found.usable) << found.reason;

  dir.manifest("nofp64", "libtest-nofp64.so", "1.0", "requires = libblobrt-libpath-dep.so.7\nlibrary_path = elsewhere\n");
  const PluginReport missing = only(discover_in(dir.str()));
  EXPECT_REASON(missing, "missing dependency libblobrt-libpath-dep.so.7");
  EXPECT_REASON(missing, "nor in the manifest's library_path");
}

// A library_path file in a directory every user may write is not loaded: the plugins'
// own trust rule (search_path.hpp) holds for what their manifests point at.
TEST(LoaderTest, LibraryPathFilesOthersCouldReplaceAreRefused) {
  PluginDir dir("libpathunsafe");
  dir.copy_module("nofp64");
  const fs::path deps = fs::path(dir.str()) / "deps";
  fs::create_directories(deps);
  fs::copy_file(fs::path(BLOBRT_TEST_PATH(BLOBRT_TEST_PLUGINS_DIR)) / "libtest-nofp64.so",
                deps / "libblobrt-libpath-dep.so.7");
  fs::permissions(deps, fs::perms::all);  // 0777, no sticky bit
  dir.manifest("nofp64", "libtest-nofp64.so", "1.0", "requires = libblobrt-libpath-dep.so.7\nlibrary_path = deps\n");
  const PluginReport r = only(discover_in(dir.str()));
  EXPECT_REASON(r, "missing dependency libblobrt-libpath-dep.so.7");
  EXPECT_REASON(r, "writable by every user");
}

// What `blobrt info` shows as the file each required library was loaded from.
TEST(LoaderTest, FilesLoadedAsNamesTheFileLoadedUnderEachName) {
  const std::vector<std::string> files =
      files_loaded_as({"libc.so.6", "libblobrt-never-loaded.so.1"}, loaded_objects());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(fs::path(files[0]).filename(), "libc.so.6") << files[0];
  EXPECT_TRUE(fs::path(files[0]).is_absolute()) << files[0];
  EXPECT_EQ(files[1], "");
}

TEST(LoaderTest, RealMissingSharedLibraryIsNamed) {
  // libtest-ghostdep.so has a DT_NEEDED entry for a library no directory holds.
  PluginDir dir("ghost");
  dir.add("ghostdep");
  EXPECT_REASON(only(discover_in(dir.str())), "missing dependency libblobrt-ghost-missing.so.1");
}

TEST(LoaderTest, InvalidManifestsAreReported) {
  PluginDir dir("badmanifest");
  dir.write("broken.plugin", "name = broken\nthis line is wrong\n");
  dir.write("escape.plugin", "name = escape\nlibrary = ../../lib/libc.so.6\nabi = 1.0\n");
  dir.write("host.plugin", "name = host\nlibrary = x.so\nabi = 1.0\n");
  dir.write("readme.txt", "not a manifest: ignored\n");
  Discovery d = discover_in(dir.str());
  ASSERT_EQ(d.inventory.plugins.size(), 3u);
  EXPECT_REASON(d.inventory.plugins[0], "invalid manifest: line 2");
  EXPECT_REASON(d.inventory.plugins[1], "must be a file name in the manifest's own directory");
  EXPECT_REASON(d.inventory.plugins[2], "reserved for the built-in device");
}

// Manifests are read only if they are regular files of at most 64 KiB: a link to
// /dev/zero, a FIFO (which would block an open()) or a huge file is skipped at once.
TEST(LoaderTest, ManifestsThatAreNotSmallRegularFilesAreSkipped) {
  PluginDir dir("oddmanifest");
  std::filesystem::create_symlink("/dev/zero", dir.str() + "/a_zero.plugin");
  ASSERT_EQ(::mkfifo((dir.str() + "/b_fifo.plugin").c_str(), 0644), 0);
  dir.write("c_huge.plugin", "name = huge\nlibrary = x.so\nabi = 1.0\n" + std::string(70000, '#'));
  auto start = std::chrono::steady_clock::now();
  Discovery d = discover_in(dir.str());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(d.inventory.plugins.size(), 3u);
  EXPECT_REASON(d.inventory.plugins[0], "not a regular file (a character device)");
  EXPECT_REASON(d.inventory.plugins[1], "not a regular file (a FIFO)");
  EXPECT_REASON(d.inventory.plugins[2], "more than the 65536 a manifest may have");
}

TEST(LoaderTest, FirstPluginOfANameWinsTheRestAreShadowed) {
  PluginDir first("first"), second("second");
  first.add("nofp64");
  second.add("nofp64");
  Discovery d = discover_in(first.str() + ":" + second.str());
  ASSERT_EQ(d.inventory.plugins.size(), 2u);
  EXPECT_TRUE(d.inventory.plugins[0].usable);
  EXPECT_REASON(d.inventory.plugins[1], "shadowed by " + first.str());
}

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
                                                              conformance::Precision::kFloat, 100, 3});
  EXPECT_FALSE(axpy.passed);
  EXPECT_NE(axpy.detail.find("axpy: element 3"), std::string::npos) << axpy.detail;
  conformance::Result dot = conformance::run_case(*device, {conformance::Operation::kDot,
                                                             conformance::Precision::kFloat, 100, 3});
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
                                                           conformance::Precision::kDouble, 10, 0});
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

TEST(LoaderTest, ChildProbingCanBeTurnedOff) {
  // With BLOBRT_PLUGIN_PROBE=inprocess (and no scanner) the usual checks still run here.
  PluginDir dir("inprocess");
  dir.add("initfails");
  ::setenv("BLOBRT_PLUGIN_PROBE", "inprocess", 1);
  PluginReport r = only(discover_in(dir.str()));
  ::unsetenv("BLOBRT_PLUGIN_PROBE");
  EXPECT_REASON(r, "initialisation failed");
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

// A stand-in scanner: a shell script in its own directory, run instead of the real one.
class FakeScanner {
 public:
  FakeScanner(const std::string& name, const std::string& body) : dir_("scanner_" + name) {
    dir_.write("scanner", "#!/bin/sh\n" + body + "\n");
    ::chmod(path().c_str(), 0755);
    const char* real = std::getenv("BLOBRT_PLUGIN_SCANNER");
    real_ = real ? real : "";
    ::setenv("BLOBRT_PLUGIN_SCANNER", path().c_str(), 1);
  }
  ~FakeScanner() {
    if (real_.empty()) {
      ::unsetenv("BLOBRT_PLUGIN_SCANNER");
    } else {
      ::setenv("BLOBRT_PLUGIN_SCANNER", real_.c_str(), 1);
    }
  }
  std::string path() const { return dir_.str() + "/scanner"; }
  const std::string& real() const { return real_; }

 private:
  PluginDir dir_;
  std::string real_;
};

// The real scanner behind a wrapper that counts its runs (one line each in a file).
class CountingScanner {
 public:
  CountingScanner(const std::string& name, const std::string& directory)
      : count_file_(directory + "/scanner-runs"),
        scanner_(name, "echo run >> '" + count_file_ + "'\nexec '" + real_scanner() + "' \"$@\"") {}
  int runs() const {
    std::ifstream in(count_file_);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }

 private:
  static std::string real_scanner() {
    const char* real = std::getenv("BLOBRT_PLUGIN_SCANNER");
    return real ? real : "/nonexistent/blobrt-plugin-scanner";
  }
  std::string count_file_;
  FakeScanner scanner_;
};

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

// Verdicts are remembered by the files' identity (verdict_cache.hpp): a second discovery
// starts no scanner; a changed library, "refresh" and "off" probe again.
TEST(VerdictCacheTest, SecondDiscoveryStartsNoScanner) {
  PluginDir cache_home("cache_home");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  ASSERT_NE(std::getenv("BLOBRT_PLUGIN_SCANNER"), nullptr);
  CountingScanner counting("counting", cache_home.str());
  auto runs = [&] { return counting.runs(); };
  PluginDir dir("cached");
  dir.add("nofp64");
  dir.add("crashes");
  Discovery first = discover_in(dir.str());
  ASSERT_EQ(first.inventory.plugins.size(), 2u);
  EXPECT_EQ(runs(), 2);
  std::ifstream written(cache_home.str() + "/blobrt/plugin-verdicts");
  EXPECT_TRUE(written.good()) << "no cache file written";

  Discovery second = discover_in(dir.str());
  EXPECT_EQ(runs(), 2) << "the second discovery started the scanner";
  EXPECT_REASON(second.inventory.plugins[0], "crashed while being probed (SIG");
  EXPECT_REASON(second.inventory.plugins[0], "remembered from an earlier probe in " + cache_home.str());
  EXPECT_TRUE(second.inventory.plugins[1].usable) << second.inventory.plugins[1].reason;
  EXPECT_EQ(second.inventory.plugins[1].devices.size(), 1u);

  // A replaced library is probed again (inode, size and mtime are the key). Replaced by
  // rename, as package managers do: the loaded copy stays mapped here.
  dir.copy_module("nofp64", "libtest-nofp64.so.new");
  std::filesystem::rename(dir.str() + "/libtest-nofp64.so.new", dir.str() + "/libtest-nofp64.so");
  discover_in(dir.str());
  EXPECT_EQ(runs(), 3);

  ::setenv("BLOBRT_PLUGIN_CACHE", "refresh", 1);
  discover_in(dir.str());
  EXPECT_EQ(runs(), 5);
  ::setenv("BLOBRT_PLUGIN_CACHE", "off", 1);
  discover_in(dir.str());
  EXPECT_EQ(runs(), 7);
  ::unsetenv("BLOBRT_PLUGIN_CACHE");
  discover_in(dir.str());
  EXPECT_EQ(runs(), 7) << "refresh did not rewrite the cache";
  ::unsetenv("XDG_CACHE_HOME");
}

// A plugin whose code answered but whose device would not open is not kept out by the
// remembered verdict: the next discovery asks it again (the device may be free by then).
TEST(VerdictCacheTest, DeviceThatWouldNotOpenIsAskedAgain) {
  PluginDir cache_home("cache_refuses");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  PluginDir dir("refuses");
  dir.add("openrefuses");
  ::setenv("BLOBRT_TEST_OPEN_REFUSES", "1", 1);
  PluginReport refused = only(discover_in(dir.str()));
  EXPECT_FALSE(refused.usable);
  EXPECT_REASON(refused, "device busy (BLOBRT_TEST_OPEN_REFUSES is set)");
  PluginReport again = only(discover_in(dir.str()));  // from the cache: asked again, same answer
  EXPECT_FALSE(again.usable);
  EXPECT_REASON(again, "device busy");
  EXPECT_EQ(again.reason.find("remembered from"), std::string::npos) << again.reason;
  ::unsetenv("BLOBRT_TEST_OPEN_REFUSES");
  PluginReport freed = only(discover_in(dir.str()));
  EXPECT_TRUE(freed.usable) << freed.reason;
  EXPECT_EQ(freed.devices.size(), 1u);
  ::unsetenv("XDG_CACHE_HOME");
}

TEST(VerdictCacheTest, UnreadableOrForeignCacheFilesAreIgnored) {
  PluginDir cache_home("cache_odd");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  std::filesystem::create_directories(cache_home.str() + "/blobrt");
  PluginDir dir("cache_odd_plugins");
  dir.add("nofp64");
  // A directory where the file should be: probed, nothing cached, no error.
  std::filesystem::create_directories(cache_home.str() + "/blobrt/plugin-verdicts");
  EXPECT_TRUE(only(discover_in(dir.str())).usable);
  std::filesystem::remove(cache_home.str() + "/blobrt/plugin-verdicts");
  // Another format's file: ignored, then replaced by this one's.
  { std::ofstream(cache_home.str() + "/blobrt/plugin-verdicts") << "blobrt-plugin-verdicts 0 0.1\ngarbage\n"; }
  EXPECT_TRUE(only(discover_in(dir.str())).usable);
  std::ifstream in(cache_home.str() + "/blobrt/plugin-verdicts");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, std::string("blobrt-plugin-verdicts 6 ") + version() + " abi " +
                        std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) + "." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR));
  ::unsetenv("XDG_CACHE_HOME");
}

TEST(LoaderSafetyTest, WorldWritableDirectoryIsRefused) {
  PluginDir dir("ww_dir");
  dir.add("nofp64");
  ::chmod(dir.str().c_str(), 0777);
  Discovery d = discover_in(dir.str());
  ASSERT_EQ(d.inventory.directories.size(), 1u);
  EXPECT_NE(d.inventory.directories[0].refused.find("is writable by every user"), std::string::npos)
      << d.inventory.directories[0].refused;
  EXPECT_TRUE(d.inventory.plugins.empty());
  ::setenv("BLOBRT_ALLOW_INSECURE_PLUGINS", "1", 1);
  Discovery allowed = discover_in(dir.str());
  ::unsetenv("BLOBRT_ALLOW_INSECURE_PLUGINS");
  EXPECT_TRUE(allowed.inventory.directories[0].refused.empty());
  EXPECT_TRUE(only(allowed).usable);
  ::chmod(dir.str().c_str(), 0755);
}

TEST(LoaderSafetyTest, WorldWritableManifestOrLibraryIsRefused) {
  PluginDir dir("ww_files");
  dir.add("nofp64");
  ::chmod((dir.str() + "/nofp64.plugin").c_str(), 0666);
  EXPECT_REASON(only(discover_in(dir.str())), "refused: " + dir.str() + "/nofp64.plugin is writable by every user");
  ::chmod((dir.str() + "/nofp64.plugin").c_str(), 0644);
  ::chmod((dir.str() + "/libtest-nofp64.so").c_str(), 0757);
  EXPECT_REASON(only(discover_in(dir.str())), "libtest-nofp64.so is writable by every user");
  ::chmod((dir.str() + "/libtest-nofp64.so").c_str(), 0755);
  EXPECT_TRUE(only(discover_in(dir.str())).usable);
}

TEST(LoaderSafetyTest, FilesOfAnotherUserOrGroupAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  PluginDir dir("owner");
  dir.add("nofp64");
  std::string manifest = dir.str() + "/nofp64.plugin";
  ASSERT_EQ(::chown(manifest.c_str(), 65534, 0), 0);
  EXPECT_REASON(only(discover_in(dir.str())), "is owned by another user (uid 65534)");
  ASSERT_EQ(::chown(manifest.c_str(), 0, 12345), 0);
  ::chmod(manifest.c_str(), 0664);
  EXPECT_REASON(only(discover_in(dir.str())), "is writable by group 12345");
  ::chmod(manifest.c_str(), 0644);
  EXPECT_TRUE(only(discover_in(dir.str())).usable);  // group-owned but not group-writable
}

// The trust check walks every directory above a plugin, as ssh's StrictModes does: a
// parent that another user owns, or may write without the sticky bit, could swap the
// plugin directory for their own.
TEST(LoaderSafetyTest, ParentDirectoriesAreCheckedToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give directories away";
  PluginDir parent("parent");
  const std::string plugins = parent.str() + "/plugins";
  std::filesystem::create_directories(plugins);
  { PluginDir source("parent_source"); source.add("nofp64");
    for (const char* f : {"/nofp64.plugin", "/libtest-nofp64.so"}) {
      std::filesystem::copy_file(source.str() + f, plugins + f);
    }
  }
  auto refusal = [&](const std::string& path) {
    Discovery d = discover_in(path);
    return d.inventory.directories.at(0).refused;
  };
  EXPECT_EQ(refusal(plugins), "");
  EXPECT_TRUE(only(discover_in(plugins)).usable);

  ASSERT_EQ(::chown(parent.str().c_str(), 65534, 0), 0);
  EXPECT_NE(refusal(plugins).find("its parent directory " + parent.str() + " is owned by another user (uid 65534)"),
            std::string::npos) << refusal(plugins);
  ASSERT_EQ(::chown(parent.str().c_str(), 0, 0), 0);

  ::chmod(parent.str().c_str(), 0777);
  EXPECT_NE(refusal(plugins).find("is writable by every user without the sticky bit"), std::string::npos)
      << refusal(plugins);
  // Sticky, as /tmp: only the owner of an entry may rename it, and the entry is ours.
  ::chmod(parent.str().c_str(), 01777);
  EXPECT_EQ(refusal(plugins), "");
  ASSERT_EQ(::chown(plugins.c_str(), 65534, 0), 0);
  EXPECT_NE(refusal(plugins).find("is owned by another user (uid 65534)"), std::string::npos) << refusal(plugins);
  ASSERT_EQ(::chown(plugins.c_str(), 0, 0), 0);
  ::chmod(parent.str().c_str(), 0755);

  // A link to the directory is followed: the target's parents are checked as well.
  const std::string link = std::string(::testing::TempDir()) + "/blobrt_plugins_link_" + std::to_string(::getpid());
  std::filesystem::remove(link);
  std::filesystem::create_directory_symlink(plugins, link);
  EXPECT_EQ(refusal(link), "");
  // The plugin inside is loaded through the link (a link's own mode, always 0777, is not
  // taken for a directory others may write).
  EXPECT_TRUE(only(discover_in(link)).usable) << only(discover_in(link)).reason;
  ASSERT_EQ(::chown(parent.str().c_str(), 65534, 0), 0);
  EXPECT_NE(refusal(link).find("(" + plugins + "): its parent directory " + parent.str()), std::string::npos)
      << refusal(link);
  ASSERT_EQ(::chown(parent.str().c_str(), 0, 0), 0);
  std::filesystem::remove(link);
}

// The verdict cache decides which plugin code runs in this process, so it is read only
// if it is as trustworthy as the plugins: a file another user owns or may write (a shared
// XDG_CACHE_HOME) is ignored, whatever it says.
TEST(VerdictCacheTest, CacheFileOthersCouldWriteIsIgnored) {
  PluginDir cache_home("cache_foreign");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  PluginDir dir("cache_foreign_plugins");
  dir.add("nofp64");
  ASSERT_TRUE(only(discover_in(dir.str())).usable);
  const std::string file = cache_home.str() + "/blobrt/plugin-verdicts";
  // Forge the verdict: the plugin "crashed".
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t verdict = text.find("\tusable\t");
  ASSERT_NE(verdict, std::string::npos) << text;
  text = text.substr(0, verdict) + "\tno_answer\t\t0\t0\tcrashed while being probed (SIGSEGV, forged)\n";
  { std::ofstream(file) << text; }
  ASSERT_NE(only(discover_in(dir.str())).reason.find("forged"), std::string::npos) << "the forged entry is not read";

  ::chmod(file.c_str(), 0666);
  PluginReport writable = only(discover_in(dir.str()));
  EXPECT_TRUE(writable.usable) << writable.reason;
  ::chmod(file.c_str(), 0600);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
    PluginReport foreign = only(discover_in(dir.str()));
    EXPECT_TRUE(foreign.usable) << foreign.reason;
    ASSERT_EQ(::chown(file.c_str(), 0, 0), 0);
    // Nor is a cache in a directory another user owns read or written.
    ASSERT_EQ(::chown((cache_home.str() + "/blobrt").c_str(), 65534, 65534), 0);
    PluginReport foreign_dir = only(discover_in(dir.str()));
    EXPECT_TRUE(foreign_dir.usable) << foreign_dir.reason;
  }
  ::unsetenv("XDG_CACHE_HOME");
}

// A remembered "usable" is never trusted over a crash the next probe would see: a change
// the manifest declares (a variable, a file such as an OpenCL ICD registry), a library
// rewritten in place with its old size and mtime (ctime), or a shared object the scanner
// had loaded that changed since, all send the plugin back to the child probe. Without
// that, the next discovery loads the now crashing plugin here, and this test dies.
TEST(VerdictCacheTest, UsableVerdictIsNotTrustedOverAChangeItDependsOn) {
  PluginDir cache_home("cache_depends");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  const std::string trigger = cache_home.str() + "/driver-broken";
  ::setenv("BLOBRT_TEST_CRASH_FILE", trigger.c_str(), 1);
  PluginDir dir("cache_depends_plugins");
  dir.copy_module("crashif");
  dir.manifest("crashif", "libtest-crashif.so", "1.0",
               "depends_on_env = BLOBRT_TEST_CRASH\ndepends_on_files = " + trigger + "\n");
  ASSERT_TRUE(only(discover_in(dir.str())).usable);
  ASSERT_TRUE(only(discover_in(dir.str())).usable);  // from the cache

  ::setenv("BLOBRT_TEST_CRASH", "1", 1);
  EXPECT_REASON(only(discover_in(dir.str())), "crashed while being probed (SIG");
  ::unsetenv("BLOBRT_TEST_CRASH");
  ASSERT_TRUE(only(discover_in(dir.str())).usable);

  { std::ofstream(trigger) << "1"; }
  EXPECT_REASON(only(discover_in(dir.str())), "crashed while being probed (SIG");
  std::filesystem::remove(trigger);
  ASSERT_TRUE(only(discover_in(dir.str())).usable);
  ::unsetenv("BLOBRT_TEST_CRASH_FILE");
  ::unsetenv("XDG_CACHE_HOME");
}

TEST(VerdictCacheTest, InPlaceRewriteOrAChangedLoadedObjectIsProbedAgain) {
  PluginDir cache_home("cache_identity");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  ASSERT_NE(std::getenv("BLOBRT_PLUGIN_SCANNER"), nullptr);
  CountingScanner counting("counting_identity", cache_home.str());
  auto runs = [&] { return counting.runs(); };
  // Rewritten in place, same bytes, same size, mtime set back (as `cp -p` leaves a file).
  // A plugin that crashes when probed: its library is never mapped into this process,
  // which an in-place rewrite would break.
  PluginDir crashing("cache_identity_crashing");
  crashing.add("crashes");
  const std::string crashing_library = crashing.str() + "/libtest-crashes.so";
  EXPECT_REASON(only(discover_in(crashing.str())), "crashed while being probed");
  EXPECT_REASON(only(discover_in(crashing.str())), "remembered from an earlier probe");
  ASSERT_EQ(runs(), 1);
  struct stat before {};
  ASSERT_EQ(::stat(crashing_library.c_str(), &before), 0);
  std::string bytes;
  {
    std::ifstream in(crashing_library, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  { std::ofstream(crashing_library, std::ios::binary | std::ios::trunc) << bytes; }
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, crashing_library.c_str(), times, 0), 0);
  EXPECT_REASON(only(discover_in(crashing.str())), "crashed while being probed");
  EXPECT_EQ(runs(), 2) << "a library rewritten with its old size and mtime kept its verdict";

  PluginDir dir("cache_identity_plugins");
  dir.add("nofp64");
  const std::string library = dir.str() + "/libtest-nofp64.so";
  ASSERT_TRUE(only(discover_in(dir.str())).usable);
  ASSERT_TRUE(only(discover_in(dir.str())).usable);
  ASSERT_EQ(runs(), 3);

  // The cache lists what the scanner had loaded; one of them changing means a new probe.
  const std::string file = cache_home.str() + "/blobrt/plugin-verdicts";
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t object = text.find(library + "\t", text.find(dir.str() + "/nofp64.plugin\t"));
  ASSERT_NE(text.find("libstdc++"), std::string::npos) << "no loaded objects remembered: " << text;
  ASSERT_NE(object, std::string::npos) << text;
  const std::size_t fingerprint = object + library.size() + 1;
  text.replace(fingerprint, text.find('\t', fingerprint) - fingerprint, "1.2.3.4.5");
  { std::ofstream(file) << text; }
  EXPECT_TRUE(only(discover_in(dir.str())).usable);
  EXPECT_EQ(runs(), 4) << "a changed loaded object kept the verdict";
  EXPECT_TRUE(only(discover_in(dir.str())).usable);
  EXPECT_EQ(runs(), 4);
  ::unsetenv("XDG_CACHE_HOME");
}

// Every field of a DeviceDescription, for the registry tests below.
void expect_same_devices(const std::vector<DeviceDescription>& a, const std::vector<DeviceDescription>& b,
                         const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(what + ", device " + std::to_string(i));
    EXPECT_EQ(a[i].backend, b[i].backend);
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].details, b[i].details);
    EXPECT_EQ(a[i].memory_bytes, b[i].memory_bytes);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].memory_model, b[i].memory_model);
    EXPECT_EQ(a[i].native_type, b[i].native_type);
    EXPECT_EQ(a[i].native_index, b[i].native_index);
    EXPECT_EQ(a[i].addressable_handles, b[i].addressable_handles);
    EXPECT_EQ(a[i].supports_fp64, b[i].supports_fp64);
    EXPECT_EQ(a[i].has_pinned_host, b[i].has_pinned_host);
    EXPECT_EQ(a[i].view_alignment, b[i].view_alignment);
  }
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

// The inventory built from the cache (no scanner started, no plugin loaded) is the one the
// scanner gave, and the one probing in process gives.
TEST(VerdictCacheTest, CachedInventoryEqualsTheFreshOne) {
  PluginDir cache_home("cache_same");
  ::setenv("XDG_CACHE_HOME", cache_home.str().c_str(), 1);
  PluginDir dir("cache_same_plugins");
  for (const char* variant : {"nofp64", "wrongaxpy", "zerodevices", "initfails"}) dir.add(variant);
  // simgpu lies inside the test plugins' directory in the build tree, beside it when
  // installed (tools/gpu-bundle.sh).
  const std::string plugins = BLOBRT_TEST_PATH(BLOBRT_TEST_PLUGINS_DIR);
  std::string simgpu_module = plugins + "/simgpu/libblobrt-simgpu.so";
  if (!std::filesystem::exists(simgpu_module)) simgpu_module = plugins + "/../simgpu/libblobrt-simgpu.so";
  dir.copy_file(simgpu_module, "libblobrt-simgpu.so");
  dir.manifest("simgpu", "libblobrt-simgpu.so");
  Discovery fresh = discover_in(dir.str());
  Discovery cached = discover_in(dir.str());
  ::setenv("BLOBRT_PLUGIN_PROBE", "inprocess", 1);
  Discovery here = discover_in(dir.str());
  ::unsetenv("BLOBRT_PLUGIN_PROBE");
  ::unsetenv("XDG_CACHE_HOME");
  ASSERT_EQ(fresh.inventory.plugins.size(), 5u);
  ASSERT_EQ(cached.inventory.plugins.size(), 5u);
  ASSERT_EQ(here.inventory.plugins.size(), 5u);
  for (std::size_t i = 0; i < fresh.inventory.plugins.size(); ++i) {
    const PluginReport& f = fresh.inventory.plugins[i];
    for (const Discovery* other : {&cached, &here}) {
      const PluginReport& o = other->inventory.plugins[i];
      const std::string what = f.name + (other == &cached ? " (cached)" : " (in process)");
      EXPECT_EQ(o.name, f.name) << what;
      EXPECT_EQ(o.usable, f.usable) << what;
      EXPECT_EQ(o.library_version, f.library_version) << what;
      // A remembered "no device" says where it was remembered; initfails is probed again.
      EXPECT_EQ(o.reason.rfind(f.reason, 0), 0u) << what << ": " << o.reason << " / " << f.reason;
      expect_same_devices(o.devices, f.devices, what);
    }
    EXPECT_EQ(fresh.loaded[i].table, nullptr) << f.name << " was loaded by discovery";
    EXPECT_EQ(cached.loaded[i].table, nullptr) << f.name << " was loaded by discovery";
  }
  const PluginReport& simgpu = fresh.inventory.plugins[2];
  ASSERT_EQ(simgpu.name, "simgpu");
  ASSERT_TRUE(simgpu.usable) << simgpu.reason;
  EXPECT_FALSE(simgpu.library_version.empty());
  EXPECT_EQ(simgpu.devices.at(0).backend, "simgpu");
  EXPECT_EQ(simgpu.devices.at(0).memory_model, MemoryModel::kSeparate);  // its memory is its own
  EXPECT_EQ(fresh.inventory.plugins[0].reason, "initialisation failed: simulated driver initialisation failure (code 42)");
}

// The runtime loads a plugin when a device is first opened, and checks that the probe's
// answer still holds: another device count, or a library that will not load now, is a
// clear error (auto then skips to the next candidate, runtime.cpp).
TEST(LoaderTest, LoadOnDemandRechecksTheProbesAnswer) {
  const std::string device = "device=0\\tcpu\\t0\\tseparate\\t0\\t0\\t0\\t0\\t0\\t0\\tfake\\tfake details";
  FakeScanner two("two_devices", "printf 'blobrt-plugin-scanner protocol=" + std::to_string(kScannerProtocol) +
                                     "\\nstatus=usable\\nlibrary_version=v\\n" + device + "\\n" + device +
                                     "\\nend\\n' >&3");
  ::setenv("BLOBRT_PLUGIN_CACHE", "off", 1);
  PluginDir dir("on_demand");
  dir.add("nofp64");
  dir.write("libtext.so", "this is a text file, not an ELF object\n");
  dir.manifest("text", "libtext.so");
  Discovery d = discover_in(dir.str());
  ::unsetenv("BLOBRT_PLUGIN_CACHE");
  ASSERT_EQ(d.inventory.plugins.size(), 2u);
  for (const PluginReport& p : d.inventory.plugins) {
    ASSERT_TRUE(p.usable) << p.reason;
    ASSERT_EQ(p.devices.size(), 2u);
    EXPECT_EQ(p.devices[1].details, "fake details");
  }
  EXPECT_EQ(load_on_demand(d.loaded[0], d.inventory.plugins[0]),
            "the plugin reports 1 device(s) now, 2 when probed (`blobrt info --rescan` or "
            "BLOBRT_PLUGIN_CACHE=refresh probes again)");
  EXPECT_EQ(d.loaded[0].table, nullptr);
  const std::string text = load_on_demand(d.loaded[1], d.inventory.plugins[1]);
  EXPECT_EQ(text.rfind("usable when probed, but cannot be loaded now: not a shared object", 0), 0u) << text;
  EXPECT_EQ(load_on_demand(d.loaded[1], d.inventory.plugins[1]), text) << "not kept";
}

}  // namespace
}  // namespace blobrt
