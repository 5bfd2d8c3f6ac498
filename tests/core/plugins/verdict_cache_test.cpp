// Tests of core/src/plugins/verdict_cache.cpp: verdicts remembered by the files' identity, what sends
// a plugin back to the probe, and which cache files are trusted.
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

}  // namespace
}  // namespace blobrt
