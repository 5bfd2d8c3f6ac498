// Backend selection through the process-wide runtime: named backends, auto order, errors
// that list what was found and where. main() adds a directory of test plugins (one with
// 0 devices, one that fails to initialise) in front of the build's plugin path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"
#include "plugin_fixture.hpp"
#include "run_command.hpp"

namespace blobrt {
namespace {

std::unique_ptr<testing::PluginDir> extra_plugins;

std::string error_of(const std::string& spec) {
  try {
    select_backend(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool has_plugin(const std::string& name) {
  for (const auto& p : inventory().plugins) {
    if (p.name == name && p.usable) return true;
  }
  return false;
}

TEST(RuntimeTest, UnknownBackendListsEverythingFoundAndWhere) {
  std::string e = error_of("nosuch");
  EXPECT_NE(e.find("backend 'nosuch' requested by select_backend cannot be used: no plugin with that name was found"),
            std::string::npos) << e;
  EXPECT_NE(e.find("searched:\n  " + extra_plugins->str() + " (BLOBRT_PLUGIN_PATH)"), std::string::npos) << e;
  EXPECT_NE(e.find("host: built-in, usable (1 device)"), std::string::npos) << e;
  EXPECT_NE(e.find("zerodevices: "), std::string::npos) << e;
  EXPECT_NE(e.find("initfails: "), std::string::npos) << e;
}

TEST(RuntimeTest, NamedBackendWithZeroDevicesFailsWithItsReason) {
  std::string e = error_of("zerodevices");
  EXPECT_NE(e.find("cannot be used: 0 devices: cudaGetDeviceCount: cudaErrorInsufficientDriver"),
            std::string::npos) << e;
  e = error_of("initfails:0");
  EXPECT_NE(e.find("'initfails:0'"), std::string::npos) << e;
  EXPECT_NE(e.find("initialisation failed"), std::string::npos) << e;
}

TEST(RuntimeTest, DeviceIndexOutOfRange) {
  EXPECT_NE(error_of("host:1").find("only device 0"), std::string::npos);
  EXPECT_NE(error_of("simgpu:3").find("has 1 device(s)"), std::string::npos);
}

TEST(RuntimeTest, MalformedSpecs) {
  for (const char* spec : {"", "BLIS", "blis:", "blis:x", "blis:-1", "auto:0", "a b", "blis:1:2"}) {
    std::string e = error_of(spec);
    EXPECT_NE(e.find("backend="), std::string::npos) << spec << " -> " << e;
  }
}

TEST(RuntimeTest, AutoPicksByAcceleratorThenPriorityAndSaysWhy) {
  select_backend("auto");
  std::string active = current_device_id();
  // A usable accelerator (cuda on a GPU node) comes first; without one blis (200) wins over
  // simgpu (1), both CPU-type.
  bool accelerator = false;
  for (const auto& p : inventory().plugins) {
    for (const auto& d : p.devices) accelerator |= p.usable && d.kind != DeviceKind::kCpu;
  }
  if (has_plugin("blis") && !accelerator) {
    EXPECT_EQ(active, "blis:0");
  }
  auto notes = selection_log();
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0].rfind("auto chose " + active, 0), 0u) << notes[0];
  bool zero_listed = false, init_listed = false;
  for (const auto& n : notes) {
    zero_listed |= n.find("skipped zerodevices: 0 devices") != std::string::npos;
    init_listed |= n.find("skipped initfails: initialisation failed") != std::string::npos;
  }
  EXPECT_TRUE(zero_listed);
  EXPECT_TRUE(init_listed);
}

const SelectionSkip* skip_of(const SelectionReport& report, const std::string& backend) {
  for (const SelectionSkip& skip : report.skipped) {
    if (skip.backend == backend) return &skip;
  }
  return nullptr;
}

// The selection in structure: a code for each plugin auto passed over, from the loader's
// verdict (not from its reason's wording), and the prose rendered from the same record.
TEST(RuntimeTest, SelectionReportHasTheCodeOfEachSkip) {
  select_backend("auto");
  SelectionReport report = selection_report();
  EXPECT_EQ(report.requested, "auto");
  EXPECT_EQ(report.origin, "select_backend");
  EXPECT_EQ(report.chosen, current_device_id());
  EXPECT_TRUE(report.error.empty()) << report.error;
  const SelectionSkip* zero = skip_of(report, "zerodevices");
  const SelectionSkip* init = skip_of(report, "initfails");
  ASSERT_TRUE(zero && init);
  EXPECT_EQ(zero->code, SkipCode::kNoDevice);
  EXPECT_STREQ(to_string(zero->code), "no_device");
  EXPECT_EQ(zero->reason.rfind("0 devices: cudaGetDeviceCount", 0), 0u) << zero->reason;
  EXPECT_TRUE(zero->device.empty());
  EXPECT_EQ(init->code, SkipCode::kInitFailed);
  for (const PluginReport& p : inventory().plugins) {
    if (p.name == "zerodevices") { EXPECT_EQ(p.status, PluginStatus::kNoDevice); }
    if (p.name == "initfails") { EXPECT_STREQ(to_string(p.status), "init_failed"); }
    if (p.usable) { EXPECT_EQ(p.status, PluginStatus::kUsable) << p.name; }
  }
  if (report.chosen != "host:0") {
    const SelectionSkip* host = skip_of(report, "host");
    ASSERT_TRUE(host);
    EXPECT_EQ(host->code, SkipCode::kBuiltinLast);
  }
  const std::vector<std::string> log = selection_log();
  ASSERT_EQ(log.size(), report.skipped.size() + 1);
  EXPECT_EQ(log[0].rfind("auto chose " + report.chosen, 0), 0u) << log[0];
}

TEST(RuntimeTest, NamedSelectionPassesOverTheOthersAndAFailureChangesNothing) {
  select_backend("simgpu");
  SelectionReport report = selection_report();
  EXPECT_EQ(report.requested, "simgpu");
  EXPECT_EQ(report.chosen, "simgpu:0");
  EXPECT_EQ(report.why, "named by select_backend");
  for (const char* other : {"host", "zerodevices", "initfails"}) {
    const SelectionSkip* skip = skip_of(report, other);
    ASSERT_TRUE(skip) << other;
    EXPECT_EQ(skip->code, SkipCode::kNotNamed) << other;
    EXPECT_EQ(skip->reason, "select_backend named simgpu") << other;
  }
  // A failed select_backend keeps the default, and the report of how it was selected.
  EXPECT_THROW(select_backend("zerodevices"), Error);
  EXPECT_EQ(selection_report().chosen, "simgpu:0");
  EXPECT_EQ(default_device()->description().id(), "simgpu:0");
  select_backend("auto");
}

TEST(RuntimeTest, SelectingFromCodeAndOpeningWithoutSelecting) {
  select_backend("host");
  EXPECT_EQ(current_device_id(), "host:0");
  EXPECT_EQ(current_device(), host_device());
  auto simgpu = open_device("simgpu");
  EXPECT_EQ(simgpu->description().id(), "simgpu:0");
  EXPECT_EQ(current_device_id(), "host:0");  // unchanged
  EXPECT_EQ(open_device("simgpu:0"), simgpu);  // opened once, shared
  Blob<float> blob(1, 1, 1, 4);
  EXPECT_EQ(blob.data()->device(), host_device());
}

// The older names still compile (with a deprecation warning, silenced here) and answer as
// the current ones do, on the thread's own device too.
TEST(RuntimeTest, DeprecatedNamesForwardToTheCurrentOnes) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  select_backend("host");
  EXPECT_EQ(active_backend(), "host:0");
  EXPECT_EQ(&active_device(), &current_device());
  {
    DeviceGuard guard("simgpu:0");
    EXPECT_EQ(active_backend(), "simgpu:0");
    EXPECT_EQ(active_device(), guard.device());
  }
  EXPECT_EQ(active_backend(), current_device_id());
#pragma GCC diagnostic pop
}

TEST(RuntimeTest, AvailableDevicesStartWithHost) {
  auto ids = available_devices();
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], "host:0");
  for (const auto& id : ids) EXPECT_NE(id.find(':'), std::string::npos);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "simgpu:0"), ids.end());
}

// The device of caffe_cpu_*: the usable plugin device with host-pointer handles and the
// highest manifest priority (blis here, never simgpu, whose memory is its own), else host.
std::string expected_host_math() {
  int best = -1;
  std::string id = "host:0";
  for (const auto& p : inventory().plugins) {
    if (!p.usable || p.priority <= best) continue;
    for (const auto& d : p.devices) {
      if (d.memory_model == MemoryModel::kShared) {
        best = p.priority;
        id = d.id();
        break;
      }
    }
  }
  return id;
}

TEST(RuntimeTest, HostMathDeviceIsTheHighestPriorityHostMemoryDevice) {
  // In a child that was told what to expect (below), only that is checked.
  if (const char* expected = std::getenv("BLOBRT_TEST_EXPECT_HOST_MATH")) {
    EXPECT_EQ(host_math_device()->description().id(), expected);
    return;
  }
  select_backend("simgpu");
  std::shared_ptr<Device> math = host_math_device();
  ASSERT_TRUE(math);
  EXPECT_EQ(math->description().memory_model, MemoryModel::kShared) << math->description().id();
  EXPECT_EQ(math->description().id(), expected_host_math());
  if (has_plugin("blis")) { EXPECT_EQ(math->description().id(), "blis:0"); }
  EXPECT_EQ(host_math_device(), math);        // opened once, cached
  EXPECT_EQ(current_device_id(), "simgpu:0");  // the active device is not changed by it
  select_backend("host");
  EXPECT_EQ(host_math_device(), math);        // nor does it follow the active device
  EXPECT_EQ(open_device(math->description().id()), math);  // the runtime's own open device
  // It does the CPU half of Caffe's math on host pointers.
  std::vector<float> a{1, 2, 3, 4, 5, 6}, x{1, -1, 2}, y{10, 20};
  math->gemv(Precision::kFloat32, Transpose::kNo, 2, 3, 1.0, a.data(), 0, x.data(), 0, 1.0, y.data(), 0);
  EXPECT_EQ(y, (std::vector<float>{15, 31}));
}

TEST(RuntimeTest, HostMathDeviceIsTheBuiltInHostWithoutHostMemoryPlugins) {
  // A child that finds only the test plugins (simgpu's memory is its own; zerodevices and
  // initfails are not usable) must get the built-in host device.
  const std::string command = "BLOBRT_PLUGIN_PATH='" BLOBRT_TEST_PLUGINS_DIR "/simgpu' BLOBRT_TEST_EXPECT_HOST_MATH=host:0 "
                              "/proc/" + std::to_string(::getpid()) + "/exe "
                              "--gtest_filter=RuntimeTest.HostMathDeviceIsTheHighestPriorityHostMemoryDevice 2>&1";
  testing::CommandResult r = testing::run_command(command);
  EXPECT_TRUE(r.exited_zero) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
}

// The registry loads only what runs: with a warm verdict cache, a process that selects one
// backend and makes a Blob maps no other plugin's library and no library only another
// plugin requires (libOpenCL, CLBlast, cudart, cuBLAS, BLIS when not selected), and the
// marker plugin's constructor (which leaves a file) never runs in it.
std::string maps_of_child(const std::string& env, const std::string& out) {
  const std::string command = env + " BLOBRT_TEST_MAPS_OUT='" + out + "' /proc/" + std::to_string(::getpid()) +
                              "/exe --gtest_filter=RuntimeTest.OnlyTheSelectedPluginIsMapped 2>&1";
  testing::CommandResult r = testing::run_command(command);
  EXPECT_TRUE(r.exited_zero) << r.output;
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// "libOpenCL.so.1" -> "/libOpenCL.so" (as a path in /proc/PID/maps ends, whatever version).
std::string mapped_stem(const std::string& soname) {
  return "/" + soname.substr(0, soname.find(".so")) + ".so";
}

TEST(RuntimeTest, OnlyTheSelectedPluginIsMapped) {
  if (const char* out = std::getenv("BLOBRT_TEST_MAPS_OUT")) {  // the child
    Blob<float> blob(1, 1, 2, 4);
    blob.mutable_gpu_data();
    std::ifstream maps("/proc/self/maps");
    std::ofstream(out) << current_device_id() << "\n" << maps.rdbuf();
    return;
  }
  testing::PluginDir dir("registry_maps");
  dir.add("nofp64");
  dir.add("marker");
  testing::PluginDir cache("registry_maps_cache");
  const std::string marker = cache.str() + "/marker-ran";
  const char* path = std::getenv("BLOBRT_PLUGIN_PATH");
  const std::string plugin_path = dir.str() + (path && *path ? std::string(":") + path : "");
  const std::string env = "BLOBRT_PLUGIN_PATH='" + plugin_path + "' XDG_CACHE_HOME='" + cache.str() +
                          "' BLOBRT_TEST_MARKER='" + marker + "'";
  const std::string out = cache.str() + "/maps";
  maps_of_child(env + " BLOBRT_BACKEND=nofp64", out);  // warms the cache (the scanner runs marker)
  ASSERT_TRUE(std::filesystem::exists(marker)) << "the marker plugin was never probed";
  std::filesystem::remove(marker);

  const std::string maps = maps_of_child(env + " BLOBRT_BACKEND=nofp64", out);
  ASSERT_EQ(maps.rfind("nofp64:0\n", 0), 0u) << maps.substr(0, 200);
  EXPECT_NE(maps.find(dir.str() + "/libtest-nofp64.so"), std::string::npos) << "the selected plugin is not mapped";
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the marker plugin's code ran in a process that never used it";
  // The child found what this process found, and dir's plugins.
  std::vector<std::string> others;
  for (const auto& p : inventory().plugins) {
    if (p.name == "nofp64" || p.library.empty()) continue;
    others.push_back(p.library);
    for (const std::string& r : p.required_libraries) others.push_back(mapped_stem(r));
  }
  others.push_back(dir.str() + "/libtest-marker.so");
  for (const char* library : {"libOpenCL.so", "libclblast.so", "libpocl.so", "libcudart.so", "libcublas.so",
                              "libblis.so", "libblobrt-opencl.so", "libblobrt-cuda.so", "libblobrt-blis.so"}) {
    others.push_back(std::string("/") + library);
  }
  for (const std::string& other : others) {
    EXPECT_EQ(maps.find(other), std::string::npos) << other << " is mapped in a process that selected nofp64";
  }

  // The control: selecting marker does load it (its constructor runs, its file is mapped),
  // and selecting opencl maps the OpenCL stack, so the checks above can see them.
  const std::string chosen = maps_of_child(env + " BLOBRT_BACKEND=marker", out);
  EXPECT_TRUE(std::filesystem::exists(marker));
  EXPECT_NE(chosen.find(dir.str() + "/libtest-marker.so"), std::string::npos);
  if (has_plugin("opencl")) {
    const std::string opencl = maps_of_child(env + " BLOBRT_BACKEND=opencl", out);
    EXPECT_NE(opencl.find("/libOpenCL.so"), std::string::npos) << opencl.substr(0, 2000);
  }
}

TEST(RuntimeTest, VersionIsSet) { EXPECT_STREQ(version(), "1.0.0"); }

}  // namespace
}  // namespace blobrt

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  using blobrt::testing::PluginDir;
  blobrt::extra_plugins = std::make_unique<PluginDir>("runtime");
  blobrt::extra_plugins->add("zerodevices");
  blobrt::extra_plugins->add("initfails");
  const char* path = std::getenv("BLOBRT_PLUGIN_PATH");
  std::string joined = blobrt::extra_plugins->str() + (path && *path ? std::string(":") + path : "");
  ::setenv("BLOBRT_PLUGIN_PATH", joined.c_str(), 1);
  int result = RUN_ALL_TESTS();
  blobrt::extra_plugins.reset();
  return result;
}
