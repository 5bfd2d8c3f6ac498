// Tests of core/src/plugins/loader.cpp: discovery over the search path, one report per manifest
// (shadowing by name, what the manifest declares reaching the report), and probing in process.
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

TEST(LoaderTest, FirstPluginOfANameWinsTheRestAreShadowed) {
  PluginDir first("first"), second("second");
  first.add("nofp64");
  second.add("nofp64");
  Discovery d = discover_in(first.str() + ":" + second.str());
  ASSERT_EQ(d.inventory.plugins.size(), 2u);
  EXPECT_TRUE(d.inventory.plugins[0].usable);
  EXPECT_REASON(d.inventory.plugins[1], "shadowed by " + first.str());
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

}  // namespace
}  // namespace blobrt
