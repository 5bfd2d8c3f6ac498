// Tests of core/src/plugins/plugin_library.cpp: loading a plugin's library and checking its table, its
// ABI, its dependencies and its devices; every broken-plugin case (tests/plugins), and the load
// on demand when a device is first opened.
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
