// Tests of core/src/plugins/search_path.cpp: the directories searched for plugins and the trust rule
// for them and for what their manifests point at (ssh's StrictModes).
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

}  // namespace
}  // namespace blobrt
