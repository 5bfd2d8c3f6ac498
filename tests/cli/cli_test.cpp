// The `blobrt` command and the Caffe demo, run as a user would run them.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdio>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin_fixture.hpp"

#ifndef BLOBRT_TOOL
#error "BLOBRT_TOOL must be defined by the build"
#endif

namespace blobrt {
namespace {

struct Outcome {
  int rc;
  std::string out;  // stdout and stderr together
  std::string err;  // stderr alone
};

// Runs a shell command line with extra environment assignments in front.
Outcome run(const std::string& env, const std::string& args,
            const std::string& program = BLOBRT_TEST_PATH(BLOBRT_TOOL)) {
  std::string err_file = ::testing::TempDir() + "/blobrt_cli_err_" + std::to_string(::getpid());
  std::string command = "env " + env + " '" + program + "' " + args + " 2>" + err_file;
  Outcome result{-1, "", ""};
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* f = std::fopen(err_file.c_str(), "r")) {
    while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) result.err.append(buffer.data(), n);
    std::fclose(f);
  }
  std::remove(err_file.c_str());
  result.out += result.err;
  return result;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// What `auto` should pick here: the device `info --json` reports active when it is a GPU
// (auto puts a plugin with an accelerator first: cuda:0 on a GPU node), else BLIS, so that
// the text checks below hold on a GPU node too and still pin auto's choice on a CPU machine.
std::string expected_auto_device() {
  Outcome r = run("", "info --json");
  const nlohmann::json info = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (info.is_object() && info["active"].is_string()) {
    const std::string active = info["active"];
    for (const auto& p : info["plugins"])
      for (const auto& d : p["devices"])
        if (d.value("id", "") == active && d.value("type", "") == "GPU") return active;
  }
  return "blis:0";
}

TEST(CliTest, InfoListsHostAndPlugins) {
  Outcome r = run("", "info");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "host  (built-in)  usable")) << r.out;
  EXPECT_TRUE(contains(r.out, "Plugin search path:")) << r.out;
  EXPECT_TRUE(contains(r.out, "Active device: ")) << r.out;
  // Which libblobrt is in use: this build's.
  EXPECT_TRUE(contains(r.out, "\nlibblobrt /") && contains(r.out, "/libblobrt.so")) << r.out;
#ifdef BLOBRT_HAVE_BLIS
  EXPECT_TRUE(contains(r.out, "blis  ")) << r.out;
  EXPECT_TRUE(contains(r.out, "BLIS 0.")) << r.out;
  EXPECT_TRUE(contains(r.out, "auto chose " + expected_auto_device() + " (")) << r.out;
#endif
}

TEST(CliTest, InfoJson) {
  Outcome r = run("", "info --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["schema_version"], 3);
  ASSERT_FALSE(info["plugins"].empty());
  EXPECT_EQ(info["plugins"][0]["name"], "host");
  EXPECT_EQ(info["plugins"][0]["builtin"], true);
  EXPECT_TRUE(info["plugins"][0]["manifest"].is_null()) << "absent values are null, not \"\"";
  // Every plugin object has the same keys, the host's included; every device those of
  // Python's blobrt.devices().
  std::set<std::string> keys;
  for (const auto& item : info["plugins"][0].items()) keys.insert(item.key());
  for (const auto& p : info["plugins"]) {
    std::set<std::string> these;
    for (const auto& item : p.items()) these.insert(item.key());
    EXPECT_EQ(these, keys) << p.dump();
    for (const auto& d : p["devices"]) {
      EXPECT_TRUE(d.contains("memory_model") && d.contains("supports_fp64") && !d.contains("fp64")) << d.dump();
      // What the device natively is, from the plugin (ABI 1.3) or derived: never a backend name.
      if (d["memory_model"] == "shared") {
        EXPECT_EQ(d["native_type"], "cpu") << d.dump();
        EXPECT_EQ(d["dlpack_device"], nlohmann::json::array({1, 0})) << d.dump();
        EXPECT_EQ(d["addressable_handles"], true) << d.dump();
      }
      if (p["name"] == "cuda") {  // on a GPU node (the GPU bundle runs this suite there)
        EXPECT_EQ(d["native_type"], "cuda") << d.dump();
        EXPECT_EQ(d["dlpack_device"], nlohmann::json::array({2, d["index"].get<int>()})) << d.dump();
        EXPECT_EQ(d["addressable_handles"], true) << d.dump();
        EXPECT_EQ(d["memory_model"], "separate") << d.dump();
      }
      if (p["name"] == "opencl") {
        EXPECT_EQ(d["native_type"], "opencl") << d.dump();
        EXPECT_EQ(d["dlpack_device"][0], 4) << d.dump();
        EXPECT_EQ(d["addressable_handles"], false) << d.dump();
        EXPECT_GT(d["view_alignment"].get<int>(), 0) << d.dump();
      }
    }
  }
  // The selection in structure: the device chosen is the active one.
  EXPECT_TRUE(info["selection"]["error"].is_null()) << r.out;
  EXPECT_EQ(info["selection"]["chosen"]["device"], info["active"]) << r.out;
#ifdef BLOBRT_HAVE_BLIS
  bool host_last = false;
  for (const auto& k : info["selection"]["skipped"]) host_last = host_last || (k["backend"] == "host" && k["code"] == "builtin_last");
  EXPECT_TRUE(host_last) << r.out;
#endif
}

TEST(CliTest, InfoJsonIsUtf8WhateverThePathsHold) {
  const std::string dir = ::testing::TempDir() + "/blobrt_cli_\xff\xfe_dir";
  std::filesystem::create_directories(dir);
  Outcome r = run("BLOBRT_PLUGIN_PATH='" + dir + "'", "info --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  // Parsing checks UTF-8 (nlohmann/json throws on invalid bytes); the byte is U+FFFD.
  const nlohmann::json info = nlohmann::json::parse(r.out);
  EXPECT_TRUE(contains(info["search_path"][0]["path"].get<std::string>(), "blobrt_cli_\xef\xbf\xbd")) << r.out;
}

TEST(CliTest, InfoBriefIsOneLinePerDevice) {
  Outcome r = run("", "info --brief");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "host:0  CPU  ")) << r.out;
  EXPECT_FALSE(contains(r.out, "Plugin search path")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '['), 1) << "one device marked [active]:\n" << r.out;
#ifdef BLOBRT_HAVE_BLIS
  EXPECT_TRUE(contains(r.out, "\nblis:0  CPU  host CPU via BLIS 0.9.0" +
                                 std::string(expected_auto_device() == "blis:0" ? "  [active]\n" : "\n")))
      << r.out;
#endif
}

TEST(CliTest, UnknownBackendFailsNamingWhatWasFoundAndWhere) {
  Outcome r = run("BLOBRT_BACKEND=nosuch", "info");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "backend 'nosuch' requested by BLOBRT_BACKEND cannot be used")) << r.err;
  EXPECT_TRUE(contains(r.err, "searched:")) << r.err;
  EXPECT_TRUE(contains(r.err, "found:\n  host: built-in")) << r.err;
  Outcome json = run("BLOBRT_BACKEND=nosuch", "info --json");
  EXPECT_EQ(json.rc, 1);
  EXPECT_TRUE(contains(json.out, "\"active\": null")) << json.out;
}

TEST(CliTest, ZeroDevicePluginNamedByTheUser) {
  testing::PluginDir dir("cli_zero");
  dir.add("zerodevices");
  Outcome r = run("BLOBRT_PLUGIN_PATH=" + dir.str() + " BLOBRT_BACKEND=zerodevices", "info");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "0 devices: cudaGetDeviceCount: cudaErrorInsufficientDriver")) << r.err;
  Outcome automatic = run("BLOBRT_PLUGIN_PATH=" + dir.str() + " BLOBRT_LOG=info", "info");
  EXPECT_EQ(automatic.rc, 0);
  EXPECT_TRUE(contains(automatic.err, "[info]: auto: skipped zerodevices: 0 devices")) << automatic.err;
  EXPECT_TRUE(contains(automatic.out, "NOT USABLE: 0 devices")) << automatic.out;
}

#ifdef BLOBRT_HAVE_OPENCL
// Kernel compilation is logged when it happens, with its time, in the plugin's own words
// (a note on the successful call, plugin_abi.h): the plugin's kernels when first built,
// CLBlast's at each routine's first call on the device.
// The OpenCL devices `info --json` lists, by type ("CPU", "GPU"): the first id of each.
std::map<std::string, std::string> first_opencl_device_by_type() {
  const nlohmann::json info = nlohmann::json::parse(run("", "info --json").out);
  std::map<std::string, std::string> first;
  for (const auto& p : info["plugins"])
    if (p.value("name", "") == "opencl")
      for (const auto& d : p["devices"]) first.emplace(d.value("type", ""), d.value("id", ""));
  return first;
}

// The OpenCL CPU device (PoCL) builds the plugin's level-1 CPU kernels; an OpenCL GPU uses
// CLBlast for level 1 (no CPU kernels to build), so on a node with GPUs alone (NVIDIA's
// OpenCL) the element-wise kernels' line and CLBlast's below are what hold.
TEST(CliTest, KernelCompilationIsLoggedWhenItHappens) {
  const std::map<std::string, std::string> first = first_opencl_device_by_type();
  ASSERT_TRUE(first.count("CPU") || first.count("GPU")) << "no OpenCL device listed";
  const std::string cpu = first.count("CPU") ? first.at("CPU") : "", device = cpu.empty() ? first.at("GPU") : cpu;
  Outcome own = run("BLOBRT_LOG=debug BLOBRT_OPENCL_MAP_TRANSITIONS=1", "selftest --backend " + device);
  EXPECT_EQ(own.rc, 0) << own.out;
  if (!cpu.empty()) EXPECT_TRUE(contains(own.err, "built the plugin's level-1 CPU kernels in")) << own.err;
  EXPECT_TRUE(contains(own.err, "built the plugin's element-wise kernels in")) << own.err;
  Outcome blast = run("BLOBRT_LOG=debug BLOBRT_OPENCL_KERNELS=clblast BLOBRT_OPENCL_MAP_TRANSITIONS=1",
                      "selftest --backend " + device);
  EXPECT_EQ(blast.rc, 0) << blast.out;
  EXPECT_TRUE(contains(blast.err, "clblast::Axpy<float>: first call on this context took")) << blast.err;
  EXPECT_TRUE(contains(blast.err, "(CLBlast compiles its kernels then)")) << blast.err;
}
#endif

#ifdef BLOBRT_HAVE_OPENCL
TEST(CliTest, OpenClWithoutAnyIcdIsASkipOrAClearError) {
  std::string empty = ::testing::TempDir() + "/blobrt_no_icds";
  std::filesystem::create_directories(empty);
  Outcome automatic = run("OCL_ICD_VENDORS=" + empty, "info");
  EXPECT_EQ(automatic.rc, 0) << automatic.out;
  EXPECT_TRUE(contains(automatic.out, "NOT USABLE: 0 devices: no OpenCL platform")) << automatic.out;
  Outcome named = run("OCL_ICD_VENDORS=" + empty + " BLOBRT_BACKEND=opencl", "info");
  EXPECT_EQ(named.rc, 1);
  EXPECT_TRUE(contains(named.err, "'opencl' requested by BLOBRT_BACKEND cannot be used: 0 devices: no OpenCL platform"))
      << named.err;
}

TEST(CliTest, OpenClDeviceIsListedWithTypeMemoryAndVersion) {
  Outcome r = run("", "info");
  EXPECT_TRUE(contains(r.out, "opencl  ")) << r.out;
  EXPECT_TRUE(contains(r.out, "type CPU, memory ")) << r.out;
  EXPECT_TRUE(contains(r.out, "OpenCL ")) << r.out;
  Outcome selftest = run("BLOBRT_BACKEND=opencl", "selftest");
  EXPECT_EQ(selftest.rc, 0) << selftest.out;
  EXPECT_TRUE(contains(selftest.out, "selftest opencl:0: ")) << selftest.out;
  EXPECT_EQ(run("", "selftest --backend opencl:9").rc, 1);
}
#endif

#ifdef BLOBRT_HAVE_CUDA
// Here (no driver) the CUDA plugin must load, report 0 devices with cudaGetDeviceCount's
// status, be skipped by auto and refused when named. On a GPU node it is usable instead.
TEST(CliTest, CudaPluginIsFoundAndReportsWhyItCannotRun) {
  Outcome info = run("", "info");
  ASSERT_EQ(info.rc, 0) << info.out;
  EXPECT_TRUE(contains(info.out, "cuda  ")) << info.out;
  EXPECT_TRUE(contains(info.out, "cuBLAS ")) << info.out;
  if (contains(info.out, "cuda  ") && !contains(info.out, "device 0: NVIDIA")) {
    EXPECT_TRUE(contains(info.out, "NOT USABLE: 0 devices: cudaGetDeviceCount: cudaError")) << info.out;
    EXPECT_TRUE(contains(info.out, "skipped cuda: 0 devices")) << info.out;
    Outcome named = run("BLOBRT_BACKEND=cuda", "info");
    EXPECT_EQ(named.rc, 1);
    EXPECT_TRUE(contains(named.err, "'cuda' requested by BLOBRT_BACKEND cannot be used: 0 devices: cudaGetDeviceCount"))
        << named.err;
    Outcome device = run("BLOBRT_BACKEND=cuda:1", "selftest");
    EXPECT_EQ(device.rc, 1);
  }
}

TEST(CliTest, CudaPluginWithAMissingRuntimeLibraryNamesIt) {
  testing::PluginDir dir("cli_cuda_dep");
  dir.copy_file(BLOBRT_TEST_PATH(BLOBRT_CUDA_PLUGIN), "libblobrt-cuda.so");
  dir.manifest("cuda", "libblobrt-cuda.so", "1.0", "requires = libcudart.so.99 libcublas.so.13\n");
  Outcome r = run("BLOBRT_PLUGIN_PATH=" + dir.str() + " BLOBRT_BACKEND=cuda", "info");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "missing dependency libcudart.so.99")) << r.err;
}
#endif

TEST(CliTest, PluginsThatCrashOrHangDoNotTakeInfoDown) {
  testing::PluginDir dir("cli_crash");
  dir.add("crashes");
  dir.add("hangs");
  Outcome r = run("BLOBRT_PLUGIN_PROBE_TIMEOUT=1 BLOBRT_PLUGIN_PATH=" + dir.str(), "info");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "NOT USABLE: crashed while being probed (SIG")) << r.out;
  EXPECT_TRUE(contains(r.out, "NOT USABLE: hung while being probed (no answer within 1 s")) << r.out;
  EXPECT_TRUE(contains(r.out, "Active device: ")) << r.out;
}

// The second `blobrt info` takes the remembered verdict of a plugin that hung, and says
// where it came from; --rescan probes again.
TEST(CliTest, SecondInfoRemembersVerdictsAndRescanProbesAgain) {
  testing::PluginDir dir("cli_cache");
  dir.add("hangs");
  testing::PluginDir cache("cli_cache_home");
  std::string env = "BLOBRT_PLUGIN_PROBE_TIMEOUT=1 XDG_CACHE_HOME=" + cache.str() + " BLOBRT_PLUGIN_PATH=" + dir.str();
  Outcome first = run(env, "info");
  EXPECT_EQ(first.rc, 0) << first.out;
  EXPECT_TRUE(contains(first.out, "NOT USABLE: hung while being probed (no answer within 1 s")) << first.out;
  EXPECT_FALSE(contains(first.out, "remembered from")) << first.out;
  Outcome second = run(env, "info");
  EXPECT_TRUE(contains(second.out, "hung while being probed")) << second.out;
  EXPECT_TRUE(contains(second.out, "remembered from an earlier probe in " + cache.str())) << second.out;
  Outcome rescan = run(env, "info --rescan --json");
  EXPECT_EQ(rescan.rc, 0) << rescan.err;
  EXPECT_TRUE(contains(rescan.out, "hung while being probed")) << rescan.out;
  EXPECT_FALSE(contains(rescan.out, "remembered from")) << rescan.out;
}

// A device the remembered probe found usable but that will not open now (busy) is skipped
// by auto for the next one, as it would have been had the probe seen it busy: the cache
// never makes auto less available.
TEST(CliTest, AutoSkipsADeviceThatWillNotOpenEvenWhenTheCacheSaidUsable) {
  testing::PluginDir dir("cli_busy");
  dir.add("openrefuses");
  testing::PluginDir cache("cli_busy_home");
  std::string env = "XDG_CACHE_HOME=" + cache.str() + " BLOBRT_PLUGIN_PATH=" + dir.str();
  Outcome free = run(env, "info");
  EXPECT_TRUE(contains(free.out, "Active device: openrefuses:0")) << free.out;
  for (const char* cache_mode : {"on", "off"}) {
    Outcome busy = run(env + " BLOBRT_TEST_OPEN_REFUSES=1 BLOBRT_PLUGIN_CACHE=" + cache_mode, "info");
    EXPECT_EQ(busy.rc, 0) << cache_mode << ": " << busy.out;
    EXPECT_TRUE(contains(busy.out, "Active device: host:0")) << cache_mode << ": " << busy.out;
    EXPECT_TRUE(contains(busy.out, "device busy (BLOBRT_TEST_OPEN_REFUSES is set)")) << cache_mode << ": " << busy.out;
  }
}

// The selection in `info --json` is the runtime's own record: each plugin passed over has
// the code of its case, with auto and with a named backend, and the reason text.
std::string stdout_of(const Outcome& r) { return r.out.substr(0, r.out.size() - r.err.size()); }

const nlohmann::json* skip_of(const nlohmann::json& selection, const std::string& backend) {
  for (const auto& k : selection["skipped"]) {
    if (k["backend"] == backend) return &k;
  }
  return nullptr;
}

std::string code_of(const nlohmann::json& selection, const std::string& backend) {
  const nlohmann::json* k = skip_of(selection, backend);
  return k ? (*k)["code"].get<std::string>() : "(not skipped)";
}

TEST(CliTest, SelectionJsonHasAReasonCodeForEverySkip) {
  testing::PluginDir dir("cli_codes");
  for (const char* variant : {"zerodevices", "initfails", "openrefuses"}) dir.add(variant);
  testing::PluginDir cache("cli_codes_home");
  const std::string env = "XDG_CACHE_HOME=" + cache.str() + " BLOBRT_PLUGIN_PATH=" + dir.str();
  auto selection = [&](const std::string& more, int rc) {
    Outcome r = run(env + " " + more, "info --json");
    EXPECT_EQ(r.rc, rc) << more << ": " << r.out;
    const nlohmann::json info = nlohmann::json::parse(stdout_of(r), nullptr, false);
    return info.is_discarded() ? nlohmann::json::object() : info["selection"];
  };

  // auto: the usable one is chosen, the others skipped for what they are.
  nlohmann::json s = selection("", 0);
  EXPECT_EQ(s["requested"], "auto") << s.dump();
  EXPECT_EQ(s["origin"], "default") << s.dump();
  EXPECT_EQ(s["chosen"]["device"], "openrefuses:0") << s.dump();
  EXPECT_EQ(s["chosen"]["reason"], "priority 5") << s.dump();
  EXPECT_EQ(code_of(s, "zerodevices"), "no_device") << s.dump();
  EXPECT_EQ(code_of(s, "initfails"), "init_failed") << s.dump();
  EXPECT_EQ(code_of(s, "host"), "builtin_last") << s.dump();
  if (const nlohmann::json* k = skip_of(s, "zerodevices")) {
    EXPECT_TRUE(contains((*k)["reason"].get<std::string>(), "0 devices: cudaGetDeviceCount")) << s.dump();
    EXPECT_TRUE((*k)["device"].is_null()) << s.dump();
  }
  EXPECT_EQ(s["log"][0], "auto chose openrefuses:0 (priority 5)") << s.dump();

  // Usable when probed (the cache remembers it), busy now: open_failed, on its device.
  s = selection("BLOBRT_TEST_OPEN_REFUSES=1", 0);
  EXPECT_EQ(s["chosen"]["device"], "host:0") << s.dump();
  EXPECT_EQ(code_of(s, "openrefuses"), "open_failed") << s.dump();
  if (const nlohmann::json* k = skip_of(s, "openrefuses")) {
    EXPECT_EQ((*k)["device"], "openrefuses:0") << s.dump();
    EXPECT_TRUE(contains((*k)["reason"].get<std::string>(), "usable when probed, but")) << s.dump();
    EXPECT_TRUE(contains((*k)["reason"].get<std::string>(), "device busy (BLOBRT_TEST_OPEN_REFUSES is set)")) << s.dump();
  }
  // Busy when probed too: the plugin itself is not usable.
  s = selection("BLOBRT_TEST_OPEN_REFUSES=1 BLOBRT_PLUGIN_CACHE=off", 0);
  EXPECT_EQ(code_of(s, "openrefuses"), "will_not_open") << s.dump();

  // A named backend: the others are not named; one that cannot be used has its own code.
  s = selection("BLOBRT_BACKEND=openrefuses", 0);
  EXPECT_EQ(s["requested"], "openrefuses") << s.dump();
  EXPECT_EQ(s["origin"], "BLOBRT_BACKEND") << s.dump();
  EXPECT_EQ(s["chosen"]["device"], "openrefuses:0") << s.dump();
  EXPECT_EQ(s["chosen"]["reason"], "named by BLOBRT_BACKEND") << s.dump();
  for (const char* other : {"host", "zerodevices", "initfails"}) EXPECT_EQ(code_of(s, other), "not_named") << s.dump();
  const std::vector<std::pair<std::string, std::string>> failures = {
      {"zerodevices", "no_device"}, {"initfails:0", "init_failed"}, {"openrefuses:2", "no_such_device"},
      {"nosuch", "not_found"}};
  for (const auto& [named, code] : failures) {
    s = selection("BLOBRT_BACKEND=" + named, 1);
    EXPECT_TRUE(s["chosen"].is_null()) << named << ": " << s.dump();
    EXPECT_TRUE(contains(s["error"].is_string() ? s["error"].get<std::string>() : "", "'" + named + "'")) << s.dump();
    ASSERT_EQ(s["skipped"].size(), 1u) << named << ": " << s.dump();
    EXPECT_EQ(s["skipped"][0]["backend"], named.substr(0, named.find(':'))) << s.dump();
    EXPECT_EQ(s["skipped"][0]["code"], code) << named << ": " << s.dump();
  }
  EXPECT_EQ(s["skipped"][0]["reason"], "no plugin with that name was found") << s.dump();
}

// Each plugin object carries its verdict as a code too, and the host's is "usable".
TEST(CliTest, PluginJsonHasItsStatusCode) {
  testing::PluginDir dir("cli_status");
  for (const char* variant : {"zerodevices", "initfails", "openrefuses"}) dir.add(variant);
  testing::PluginDir cache("cli_status_home");
  Outcome r = run("XDG_CACHE_HOME=" + cache.str() + " BLOBRT_PLUGIN_PATH=" + dir.str(), "info --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json info = nlohmann::json::parse(stdout_of(r), nullptr, false);
  ASSERT_FALSE(info.is_discarded()) << r.out;
  std::map<std::string, std::string> status;
  for (const auto& p : info["plugins"]) status[p["name"].get<std::string>()] = p["status"].get<std::string>();
  EXPECT_EQ(status["host"], "usable");
  EXPECT_EQ(status["zerodevices"], "no_device");
  EXPECT_EQ(status["initfails"], "init_failed");
  EXPECT_EQ(status["openrefuses"], "usable");
}

TEST(CliTest, InspectReferenceFile) {
  Outcome r =
      run("", "inspect '" + BLOBRT_TEST_PATH(BLOBRT_TEST_DATA_DIR) + "/ref_float_2x3x4x5_diff.binaryproto'");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "shape 2 3 4 5 (120), precision float")) << r.out;
  EXPECT_TRUE(contains(r.out, "asum 2835, sumsq 98105")) << r.out;
  // Numbers read back exactly: 36451.25, not 36451.2 (6 significant digits).
  EXPECT_TRUE(contains(r.out, "asum 1815, sumsq 36451.25\n")) << r.out;
  Outcome j = run("", "inspect --json '" + BLOBRT_TEST_PATH(BLOBRT_TEST_DATA_DIR) + "/ref_float_2x3x4x5_diff.binaryproto'");
  ASSERT_EQ(j.rc, 0) << j.out;
  const nlohmann::json report = nlohmann::json::parse(j.out);
  EXPECT_EQ(report["shape"], nlohmann::json({2, 3, 4, 5}));
  EXPECT_EQ(report["dtype"], "float32");
  EXPECT_EQ(report["diff"]["sumsq"].get<double>(), 36451.25);
}

TEST(CliTest, InspectReadsText) {
  const std::string file = ::testing::TempDir() + "/blobrt_cli_text.prototxt";
  std::ofstream(file) << "shape { dim: 3 }\ndata: 0.1\ndata: -2.5\ndata: 1e30\n";
  Outcome r = run("", "inspect --json " + file);
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["data"]["max"].get<double>(), static_cast<double>(1e30f)) << r.out;
  EXPECT_EQ(report["data"]["min"].get<double>(), -2.5) << r.out;
}

TEST(CliTest, InspectBadInputIsOneLineAndNonZero) {
  Outcome missing = run("", "inspect /nonexistent.binaryproto");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_TRUE(contains(missing.err, "File not found: /nonexistent.binaryproto")) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  Outcome garbage = run("", "inspect '" + BLOBRT_TEST_PATH(BLOBRT_TOOL) + "'");  // an ELF file is no BlobProto
  EXPECT_EQ(garbage.rc, 1) << garbage.out;
  EXPECT_TRUE(contains(garbage.err, "blobrt: ")) << garbage.err;
  Outcome usage = run("", "inspect");
  EXPECT_EQ(usage.rc, 2);
  // A well-formed BlobProto whose shape and data disagree: the file and the mismatch.
  std::string mismatched = ::testing::TempDir() + "/blobrt_mismatch.binaryproto";
  {
    std::ofstream out(mismatched, std::ios::binary);
    // shape {dim: 3} (field 7), data: [1] (field 5, packed): 3 elements needed, 1 given
    const char bytes[] = {0x3a, 0x03, 0x0a, 0x01, 0x03, 0x2a, 0x04, 0x00, 0x00, (char)0x80, 0x3f};
    out.write(bytes, sizeof bytes);
  }
  Outcome bad = run("", "inspect " + mismatched);
  EXPECT_EQ(bad.rc, 1);
  EXPECT_TRUE(contains(bad.err, mismatched + ": FromProto: data has 1 values but the Blob shape 3 (3) needs 3"))
      << bad.err;
  // Truncated: the reference file cut in half.
  std::string truncated = ::testing::TempDir() + "/blobrt_truncated.binaryproto";
  {
    std::ifstream in(BLOBRT_TEST_PATH(BLOBRT_TEST_DATA_DIR) + "/ref_float_2x3x4x5_diff.binaryproto",
                     std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(truncated, std::ios::binary) << all.substr(0, all.size() / 2);
  }
  Outcome cut = run("", "inspect " + truncated);
  EXPECT_EQ(cut.rc, 1);
  EXPECT_TRUE(contains(cut.err, truncated + ": not a valid binary blobrt.BlobProto (truncated, corrupt")) << cut.err;
}

// Protobuf's wire format by hand, for the files below.
std::string wire_varint(std::uint64_t n) {
  std::string out;
  do {
    out += static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n);
  return out;
}
std::string wire_field(int number, const std::string& bytes) {
  return wire_varint(static_cast<std::uint64_t>(number) << 3 | 2) + wire_varint(bytes.size()) + bytes;
}
std::string wire_int(int number, std::uint64_t value) {
  return wire_varint(static_cast<std::uint64_t>(number) << 3) + wire_varint(value);
}

// Issue 48: a Datum, a .solverstate and a model with a corrupt layer were read by `blobrt
// inspect FILE` and `blobrt inspect -` as made-up or empty Blobs, exit 0; a fork's model
// (an extra NetParameter field) was refused. Now: one line naming the file and why, exit 1;
// the fork's model lists its layers.
TEST(CliTest, InspectRefusesFilesThatAreNotWhatTheyClaim) {
  const std::string dir = ::testing::TempDir();
  const std::string blob = wire_field(7, wire_field(1, wire_varint(2))) + wire_field(5, std::string("\0\0\x80?\0\0\0@", 8));
  const std::string layer = wire_field(100, wire_field(1, "ip") + wire_field(2, "InnerProduct") + wire_field(7, blob));
  const std::map<std::string, std::pair<std::string, std::string>> files = {
      {"image.datum",
       {wire_int(1, 1) + wire_int(2, 28) + wire_int(3, 28) + wire_field(4, std::string(784, '\x01')) + wire_int(5, 3),
        "not a BlobProto"}},
      {"lenet.solverstate",
       {wire_int(1, 200) + wire_field(2, "lenet.caffemodel") + wire_field(3, blob) + wire_int(4, 0), "not a BlobProto"}},
      // the blob's dimension 2 -> 3: its two values no longer fit its shape
      {"corrupt.caffemodel", {layer.substr(0, layer.find(blob) + 4) + '\x03' + layer.substr(layer.find(blob) + 5),
                              "layer 'ip' blob 0"}}};
  for (const auto& [name, file] : files) {
    const std::string path = dir + "/blobrt_cli_" + name;
    std::ofstream(path, std::ios::binary) << file.first;
    for (const std::string& args : {"inspect " + path, "inspect - < " + path}) {
      Outcome r = run("", args);
      EXPECT_EQ(r.rc, 1) << args << ": " << r.out;
      EXPECT_TRUE(contains(r.err, args[8] == '-' ? "/dev/stdin: " : path + ": ")) << r.err;
      EXPECT_TRUE(contains(r.err, file.second)) << r.err;
      EXPECT_FALSE(contains(r.out, "\n  shape ")) << r.out;  // no Blob printed
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
  const std::string fork = dir + "/blobrt_cli_fork.caffemodel";
  std::ofstream(fork, std::ios::binary) << layer + wire_int(999, 7);
  Outcome r = run("", "inspect " + fork);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "1 layers, 1 blobs, 2 parameters")) << r.out;
}

// Issue 48: a 2 GiB + 4 KiB file took 34 s and 3.1 GB before it was refused; a large file
// read under a memory limit printed only "blobrt: std::bad_alloc". Both name the file and
// its size (the limit: ulimit -v in the shell that runs the command).
TEST(CliTest, InspectNamesTheFileAndSizeOfAFileTooLargeToRead) {
  const std::string huge = ::testing::TempDir() + "/blobrt_cli_huge.caffemodel";
  std::ofstream(huge, std::ios::binary).close();
  ASSERT_EQ(::truncate(huge.c_str(), (std::int64_t(2) << 30) + 4096), 0);
  const auto start = std::chrono::steady_clock::now();
  Outcome r = run("", "inspect " + huge);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(contains(r.err, huge + ": the file is 2147487744 bytes (2.0 GiB)")) << r.err;
  ASSERT_EQ(::truncate(huge.c_str(), std::int64_t(512) << 20), 0);
#if !defined(__SANITIZE_ADDRESS__)
  // 384 MiB of address space: enough to start, not to read 512 MiB.
  Outcome limited = run("", "-c 'ulimit -v 393216; exec \"$0\" inspect " + huge + "' '" + BLOBRT_TEST_PATH(BLOBRT_TOOL) + "'",
                        "/bin/sh");
  EXPECT_EQ(limited.rc, 1) << limited.out;
  EXPECT_TRUE(contains(limited.err, huge + ": out of memory while reading it (the file is 536870912 bytes"))
      << limited.err;
#endif
  std::remove(huge.c_str());
}

TEST(CliTest, SelftestPassesOnEveryAvailableBackend) {
  Outcome r = run("", "selftest");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, " 0 failed")) << r.out;
  for (const char* backend : {"host", "simgpu"}) {
    Outcome b = run("", std::string("selftest --backend ") + backend);
    EXPECT_EQ(b.rc, 0) << b.out;
    EXPECT_TRUE(contains(b.out, "PASS  axpy float")) << b.out;
  }
  Outcome none = run("", "selftest --backend nosuch");
  EXPECT_EQ(none.rc, 1);
}

// Each operation's line is written as it finishes: the first arrives while the rest still
// runs, not with the summary at the end.
TEST(CliTest, SelftestPrintsEachResultAsItFinishes) {
  FILE* pipe = ::popen(("'" + std::string(BLOBRT_TEST_PATH(BLOBRT_TOOL)) + "' selftest --backend host").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string seen;
  std::array<char, 4096> buffer{};
  auto has_result = [&] { return contains(seen, "  PASS  ") || contains(seen, "  FAIL  ") || contains(seen, "  SKIP  "); };
  while (!has_result()) {
    ssize_t n = ::read(fileno(pipe), buffer.data(), buffer.size());
    if (n <= 0) break;
    seen.append(buffer.data(), static_cast<std::size_t>(n));
  }
  const std::string at_first_result = seen;
  for (ssize_t n; (n = ::read(fileno(pipe), buffer.data(), buffer.size())) > 0;) seen.append(buffer.data(), n);
  EXPECT_EQ(::pclose(pipe), 0) << seen;
  EXPECT_TRUE(contains(at_first_result, "PASS  ")) << at_first_result;
  EXPECT_FALSE(contains(at_first_result, "selftest host:0: ")) << "everything came at once:\n" << at_first_result;
  EXPECT_TRUE(contains(seen, "selftest host:0: ")) << seen;
}

TEST(CliTest, SelftestFailsOnAWrongBackend) {
  testing::PluginDir dir("cli_wrong");
  dir.add("wrongaxpy");
  Outcome r = run("BLOBRT_PLUGIN_PATH=" + dir.str(), "selftest --backend wrongaxpy");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL  axpy float")) << r.out;
  EXPECT_TRUE(contains(r.out, "PASS  dot float")) << r.out;
}

TEST(CliTest, UsageErrors) {
  EXPECT_EQ(run("", "").rc, 2);
  Outcome unknown = run("", "frobnicate");
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_TRUE(contains(unknown.err, "frobnicate")) << unknown.err;
  Outcome yaml = run("", "info --yaml");
  EXPECT_EQ(yaml.rc, 2);
  EXPECT_TRUE(contains(yaml.err, "--yaml") && contains(yaml.err, "blobrt info --help")) << yaml.err;
  Outcome no_value = run("", "selftest --backend");
  EXPECT_EQ(no_value.rc, 2);
  EXPECT_TRUE(contains(no_value.err, "--backend")) << no_value.err;
  EXPECT_EQ(run("", "info --json --brief").rc, 2);
  Outcome bad_env = run("BLOBRT_BACKEND='bl is'", "info");
  EXPECT_EQ(bad_env.rc, 1);
  EXPECT_TRUE(contains(bad_env.err, "is not a backend name")) << bad_env.err;
}

TEST(CliTest, HelpAndVersion) {
  for (const char* command : {"", "info ", "inspect ", "selftest "}) {
    Outcome help = run("", std::string(command) + "--help");
    EXPECT_EQ(help.rc, 0) << command << help.out;
    EXPECT_TRUE(contains(help.out, "Usage: blobrt " + std::string(command))) << command << help.out;
    EXPECT_TRUE(contains(help.out, "Exit codes:\n  0  success")) << command << help.out;
  }
  Outcome version = run("", "--version");
  EXPECT_EQ(version.rc, 0);
  EXPECT_EQ(version.out.rfind("blobrt 1.", 0), 0u) << version.out;
}

TEST(CliTest, CaffeDemoPrintsTheSameNumbersOnEveryBackend) {
  std::string reference;
  for (const char* backend : {"host", "simgpu", "blis", "opencl"}) {
    std::string dir = ::testing::TempDir() + "/blobrt_demo_" + backend;
    std::filesystem::create_directories(dir);
    // The demo writes a.txt into its working directory.
    Outcome demo = run("BLOBRT_BACKEND=" + std::string(backend),
                   "-c 'cd " + dir + " && exec " + BLOBRT_TEST_PATH(BLOBRT_DEMO) + "'", "/bin/sh");
    if (demo.rc != 0 && contains(demo.err, "cannot be used")) continue;  // not on this machine
    EXPECT_EQ(demo.rc, 0) << backend << ": " << demo.out;
    EXPECT_TRUE(contains(demo.out, "ASUM: 288\nSUMSQ: 4600\n")) << backend << ": " << demo.out;
    EXPECT_TRUE(contains(demo.out, "b[0][1][][2][3]23\n")) << backend << ": " << demo.out;
    if (reference.empty()) reference = demo.out;
    EXPECT_EQ(demo.out, reference) << backend;
  }
}

}  // namespace
}  // namespace blobrt
