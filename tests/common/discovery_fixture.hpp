// What the tests of core/src/plugins (tests/core/plugins/) and of the plugin device share:
// discovery over chosen directories, a report's reason, stand-in and counting scanners.
#ifndef BLOBRT_TESTS_DISCOVERY_FIXTURE_HPP
#define BLOBRT_TESTS_DISCOVERY_FIXTURE_HPP

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "blobrt/device.hpp"
#include "child_probe.hpp"
#include "loader.hpp"
#include "manifest.hpp"
#include "plugin_fixture.hpp"

namespace blobrt::testing {

// Runs discovery over exactly these directories.
inline Discovery discover_in(const std::string& path) {
  ::setenv("BLOBRT_PLUGIN_PATH", path.c_str(), 1);
  ::setenv("BLOBRT_PLUGIN_SYSTEM_PATH", "", 1);
  return discover_plugins();
}

// A copy: the Discovery is often a temporary.
inline PluginReport only(const Discovery& d) {
  EXPECT_EQ(d.inventory.plugins.size(), 1u);
  return d.inventory.plugins.empty() ? PluginReport{} : d.inventory.plugins[0];
}

#define EXPECT_REASON(report, text)                                              \
  do {                                                                           \
    EXPECT_FALSE((report).usable);                                               \
    EXPECT_NE((report).reason.find(text), std::string::npos) << (report).reason; \
  } while (0)

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

// Every field of a DeviceDescription, for the registry tests below.
inline void expect_same_devices(const std::vector<DeviceDescription>& a, const std::vector<DeviceDescription>& b,
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

}  // namespace blobrt::testing

#endif  // BLOBRT_TESTS_DISCOVERY_FIXTURE_HPP
