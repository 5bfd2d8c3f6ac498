// blobrt-bench-busy: Caffe's gemms and a LeNet training step with blobrt's default threads
// against one thread, on a quiet machine and with one core kept busy by a spinning process
// that the benchmark starts and stops itself (issue 48: a job must never run many times
// slower because blobrt asked for threads it cannot get; target: busy default within 1.5x
// of busy one). docs/performance.md, "Busy cores: gemm and the Caffe step", has the figures.
//   busy/WORKLOAD/LOAD/THREADS
//     WORKLOAD  gemm_MxNxK_XY (bench_busy_worker.cpp lists them) or lenet_step_64
//     LOAD      idle, or busy: a process spinning on the last CPU of this one's affinity mask
//     THREADS   default (the environment as given), or one (BLOBRT_NUM_THREADS=1)
// Each benchmark runs its workload in a worker process of its own (this executable again,
// bench_busy.hpp): blobrt reads its thread count once per process. The time is the
// worker's own, call by call (manual time); counter gflops for the gemms.
//   blobrt-bench-busy [--benchmark_repetitions=3 ...]   (--help: the options)
//   benchmarks/busy_report.py results.json              (the table; exit 1 above 1.5x)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_busy.hpp"
#include "bench_cli.hpp"
#include "blobrt/runtime.hpp"

extern char** environ;

namespace blobrt::bench::busy {
namespace {

// A process spinning on the last CPU of this process's affinity mask until destroyed; it
// dies with this process (PR_SET_PDEATHSIG) if that ends first.
class BusyCore {
 public:
  BusyCore() {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (::sched_getaffinity(0, sizeof mine, &mine) != 0) throw std::runtime_error("sched_getaffinity failed");
    int last = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mine)) last = cpu;
    }
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(last, &one);
      ::sched_setaffinity(0, sizeof one, &one);
      for (;;) asm volatile("" ::: "memory");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // spinning before timing starts
  }
  ~BusyCore() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  BusyCore(const BusyCore&) = delete;
  BusyCore& operator=(const BusyCore&) = delete;

 private:
  pid_t pid_ = -1;
};

// A worker process (this executable, kWorkerVariable set) and the two pipes to it.
class Worker {
 public:
  Worker(const std::string& workload, bool one_thread) {
    // The child's environment is made before fork: nothing but exec after it.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string entry = *e;
      if (entry.rfind(std::string(kWorkerVariable) + "=", 0) == 0) continue;
      if (one_thread && entry.rfind("BLOBRT_NUM_THREADS=", 0) == 0) continue;
      env.push_back(entry);
    }
    env.push_back(std::string(kWorkerVariable) + "=" + workload);
    if (one_thread) env.push_back("BLOBRT_NUM_THREADS=1");
    std::vector<char*> envp;
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    char exe[] = "/proc/self/exe";
    char* argv[] = {exe, nullptr};
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (::pipe2(from_child, O_CLOEXEC) != 0) {
      ::close(to_child[0]);
      ::close(to_child[1]);
      throw std::runtime_error("pipe failed");
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      ::execve(exe, argv, envp.data());
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    to_ = to_child[1];
    from_ = from_child[0];
    if (pid_ < 0) throw std::runtime_error("fork failed");
    char name[kNameBytes];
    if (!read_all(name, sizeof name)) throw std::runtime_error("the worker for " + workload + " failed to start");
    name[kNameBytes - 1] = 0;
    device_ = name;
  }
  ~Worker() {
    ::close(to_);  // end of file: the worker returns
    ::close(from_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  const std::string& device() const { return device_; }
  // Seconds that `count` calls took in the worker.
  double run(std::int64_t count) {
    std::int64_t ns = -1;
    if (::write(to_, &count, sizeof count) != sizeof count || !read_all(&ns, sizeof ns) || ns < 0) {
      throw std::runtime_error("the worker failed (its stderr says why)");
    }
    return static_cast<double>(ns) * 1e-9;
  }

 private:
  bool read_all(void* data, std::size_t size) {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
      ssize_t got = ::read(from_, p, size);
      if (got <= 0) return false;
      p += got;
      size -= static_cast<std::size_t>(got);
    }
    return true;
  }
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string device_;
};

void run(benchmark::State& state, const std::string& workload, double flops, bool busy, bool one_thread) {
  try {
    Worker worker(workload, one_thread);
    std::unique_ptr<BusyCore> spinner(busy ? new BusyCore : nullptr);
    double seconds = 0;
    for (auto _ : state) {
      const double s = worker.run(1);
      state.SetIterationTime(s);
      seconds += s;
    }
    spinner.reset();
    state.SetLabel(worker.device());
    if (flops > 0 && seconds > 0) state.counters["gflops"] = flops * state.iterations() / seconds * 1e-9;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_all(bool smoke) {
  struct Case {
    std::string name;
    double flops;
  };
  std::vector<Case> cases;
  for (const GemmCase& g : gemm_cases(smoke)) cases.push_back({g.name, 2.0 * g.m * g.n * g.k});
  cases.push_back({lenet_name(smoke ? 4 : 64), 0});
  for (const Case& c : cases) {
    for (bool busy : {false, true}) {
      for (bool one : {false, true}) {
        const std::string name = "busy/" + c.name + "/" + (busy ? "busy" : "idle") + "/" + (one ? "one" : "default");
        auto* b = benchmark::RegisterBenchmark(name.c_str(), [c, busy, one](benchmark::State& s) {
          run(s, c.name, c.flops, busy, one);
        });
        b->UseManualTime()->Unit(c.flops > 0 ? benchmark::kMicrosecond : benchmark::kMillisecond);
        b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
      }
    }
  }
}

}  // namespace
}  // namespace blobrt::bench::busy

int main(int argc, char** argv) {
  if (const char* workload = std::getenv(blobrt::bench::busy::kWorkerVariable)) {
    return blobrt::bench::busy::serve(workload);
  }
  ::signal(SIGPIPE, SIG_IGN);  // a worker that died is a failed write, said in the results
  bool smoke = false;
  const blobrt::bench::Driver driver{
      "blobrt-bench-busy",
      "Caffe's gemms and LeNet's step, default threads against one, idle and with one core busy "
      "(docs/performance.md)",
      blobrt::version(), &smoke};
  std::vector<std::string> args;
  if (const auto exit_code = blobrt::bench::parse_command_line(argc, argv, driver, args)) return *exit_code;
  blobrt::bench::busy::register_all(smoke);
  return blobrt::bench::run_registered(argv[0], driver, args, "and each worker's start-up");
}
