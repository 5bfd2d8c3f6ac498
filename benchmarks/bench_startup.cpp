// blobrt-bench-startup: what a process pays at start for the plugins it does not use.
// Each iteration starts benchmarks/startup_child.cpp (one Blob with BLOBRT_BACKEND=blis)
// and waits for it with wait4: the wall time (manual time) and its peak resident memory
// (ru_maxrss, counter rss_kib). The plugin path holds the build's blis plugin only
// (startup/blis_only) or blis, opencl and cuda (startup/blis_opencl_cuda), with a warm
// verdict cache (XDG_CACHE_HOME in a temporary directory, filled before timing).
// startup/ratio alternates the two and reports all-three / blis-only as time_ratio and
// rss_ratio; the target is both within 1.10. foreign_libs counts the OpenCL/CUDA libraries
// the child had mapped (its exit status): 0 is the target.
//   blobrt-bench-startup [--benchmark_min_time=...]    (--help: the options)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cli.hpp"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

struct Run {
  double seconds = 0;
  long rss_kib = 0;
  int foreign = 0;
};

// The environment of the child: this one without BLOBRT_* and XDG_CACHE_HOME, then the
// plugin path, the build's scanner, the cache directory and the backend.
std::vector<std::string> child_environment(const std::string& plugin_path, const std::string& cache) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "BLOBRT_", 7) != 0 && std::strncmp(*e, "XDG_CACHE_HOME=", 15) != 0) env.emplace_back(*e);
  }
  env.push_back("BLOBRT_PLUGIN_PATH=" + plugin_path);
  env.push_back("BLOBRT_PLUGIN_SYSTEM_PATH=");
  env.push_back(std::string("BLOBRT_PLUGIN_SCANNER=") + BLOBRT_BENCH_SCANNER);
  env.push_back("XDG_CACHE_HOME=" + cache);
  env.push_back("BLOBRT_BACKEND=blis");
  return env;
}

Run start_child(std::vector<std::string> env) {
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string program = BLOBRT_BENCH_STARTUP_CHILD;
  char* argv[] = {program.data(), nullptr};
  const auto start = std::chrono::steady_clock::now();
  pid_t child = -1;
  if (::posix_spawn(&child, program.c_str(), nullptr, nullptr, argv, envp.data()) != 0) {
    throw std::runtime_error("cannot start " + program);
  }
  int status = 0;
  rusage usage{};
  while (::wait4(child, &status, 0, &usage) < 0) {
  }
  Run run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.rss_kib = usage.ru_maxrss;
  if (!WIFEXITED(status)) throw std::runtime_error(program + " did not exit normally");
  run.foreign = WEXITSTATUS(status);
  return run;
}

// A cache directory per configuration, removed at exit, warmed by one untimed start.
class Setup {
 public:
  explicit Setup(const std::string& plugin_path) {
    char pattern[] = "/tmp/blobrt-bench-startup-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    cache_ = pattern;
    env_ = child_environment(plugin_path, cache_);
    start_child(env_);
  }
  ~Setup() {
    std::error_code ec;
    std::filesystem::remove_all(cache_, ec);
  }
  Run start() const { return start_child(env_); }

 private:
  std::string cache_;
  std::vector<std::string> env_;
};

const std::string kBlisOnly = BLOBRT_BENCH_BLIS_DIR;
const std::string kAll = BLOBRT_BENCH_PLUGIN_DIRS;

void report(benchmark::State& state, double rss_sum, int foreign_max) {
  state.counters["rss_kib"] = benchmark::Counter(rss_sum / static_cast<double>(state.iterations()));
  state.counters["foreign_libs"] = foreign_max;
}

void BM_Startup(benchmark::State& state, const std::string& plugin_path) {
  Setup setup(plugin_path);
  double rss = 0;
  int foreign = 0;
  for (auto _ : state) {
    Run run = setup.start();
    state.SetIterationTime(run.seconds);
    rss += static_cast<double>(run.rss_kib);
    foreign = std::max(foreign, run.foreign);
  }
  report(state, rss, foreign);
}

// Both configurations in turn, so that the machine's drift falls on both alike.
void BM_StartupRatio(benchmark::State& state) {
  Setup blis(kBlisOnly), all(kAll);
  double time_blis = 0, time_all = 0, rss_blis = 0, rss_all = 0;
  int foreign = 0;
  for (auto _ : state) {
    Run a = blis.start();
    Run b = all.start();
    state.SetIterationTime(a.seconds + b.seconds);
    time_blis += a.seconds;
    time_all += b.seconds;
    rss_blis += static_cast<double>(a.rss_kib);
    rss_all += static_cast<double>(b.rss_kib);
    foreign = std::max(foreign, b.foreign);
  }
  state.counters["time_ratio"] = time_all / time_blis;
  state.counters["rss_ratio"] = rss_all / rss_blis;
  state.counters["foreign_libs"] = foreign;
}

}  // namespace

BENCHMARK_CAPTURE(BM_Startup, blis_only, kBlisOnly)->Name("startup/blis_only")->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Startup, blis_opencl_cuda, kAll)
    ->Name("startup/blis_opencl_cuda")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StartupRatio)->Name("startup/ratio")->UseManualTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  const blobrt::bench::Driver driver{
      "blobrt-bench-startup",
      "What a process pays at start for the plugins it does not use: blis alone against blis, opencl and cuda",
      BLOBRT_VERSION};
  std::vector<std::string> args;
  if (const auto exit_code = blobrt::bench::parse_command_line(argc, argv, driver, args)) return *exit_code;
  return blobrt::bench::run_registered(
      argv[0], driver, args,
      "more where one iteration outlasts it, and the untimed start that fills each verdict cache");
}
