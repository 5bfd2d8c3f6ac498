// Builds throw-away plugin directories: a manifest plus a copy of one of the test plugin
// modules (tests/plugins), for the loader, runtime and CLI tests.
#ifndef BLOBRT_TESTS_PLUGIN_FIXTURE_HPP
#define BLOBRT_TESTS_PLUGIN_FIXTURE_HPP

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.hpp"

#ifndef BLOBRT_TEST_PLUGINS_DIR
#error "BLOBRT_TEST_PLUGINS_DIR must be defined by the build"
#endif

namespace blobrt::testing {

namespace fs = std::filesystem;

class PluginDir {
 public:
  explicit PluginDir(const std::string& name) {
    path_ = fs::path(::testing::TempDir()) / ("blobrt_plugins_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~PluginDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  // Copies libtest-VARIANT.so in as LIBRARY (default: the same name).
  void copy_module(const std::string& variant, const std::string& library = "") {
    fs::path from = fs::path(BLOBRT_TEST_PATH(BLOBRT_TEST_PLUGINS_DIR)) / ("libtest-" + variant + ".so");
    fs::copy_file(from, path_ / (library.empty() ? from.filename().string() : library),
                  fs::copy_options::overwrite_existing);
  }
  void copy_file(const std::string& from, const std::string& name) {
    fs::copy_file(from, path_ / name, fs::copy_options::overwrite_existing);
  }
  void write(const std::string& file, const std::string& text) { std::ofstream(path_ / file) << text; }
  // A manifest named NAME.plugin.
  void manifest(const std::string& name, const std::string& library, const std::string& abi = "1.0",
                const std::string& extra = "") {
    write(name + ".plugin", "name = " + name + "\nlibrary = " + library + "\nabi = " + abi +
                                "\npriority = 5\n" + extra);
  }
  // A plugin from a test module, under the module's variant name.
  void add(const std::string& variant) {
    copy_module(variant);
    manifest(variant, "libtest-" + variant + ".so");
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

}  // namespace blobrt::testing

#endif
