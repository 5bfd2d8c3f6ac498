// Tests of core/src/plugins/manifest.cpp: parsing a manifest, and reading manifest files (which
// files are read, what an invalid one reports).
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

}  // namespace
}  // namespace blobrt
