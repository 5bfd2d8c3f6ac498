// The level-1 kernels' thread team (core/kernels/blobrt_kernels/thread_team.hpp) on a
// quiet machine and on one where every other core is taken by another process.
//   team/team/OP/float/N        the team as configured (BLOBRT_NUM_THREADS, affinity)
//   team/one/OP/float/N         the same kernels on the calling thread alone
//   team/loaded/OP/float/N      the team, with a busy loop pinned to every other CPU
//   team/loaded_one/OP/float/N  one thread, with the same busy loops
// The target (docs/performance.md, "Shared cores"): loaded within 1.5x of one.
// The kernels are called directly (the host device calls exactly these), so that the
// team size can be changed between benchmarks; this executable's team is its own.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "bench_common.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"

namespace blobrt::bench {
namespace {

enum class Op { kAxpy, kScal, kDot, kAsum, kCopy, kMemset };
struct OpInfo {
  Op op;
  const char* name;
  Pattern pattern;
};
const OpInfo kOps[] = {{Op::kAxpy, "axpy", Pattern::kTriad}, {Op::kScal, "scal", Pattern::kScale},
                       {Op::kDot, "dot", Pattern::kDot},     {Op::kAsum, "asum", Pattern::kSum},
                       {Op::kCopy, "copy", Pattern::kCopy},  {Op::kMemset, "memset", Pattern::kFill}};

// One process spinning on each CPU of this process's affinity mask but the first; they
// die with this process (PR_SET_PDEATHSIG) if it ends before stop().
class BusyLoops {
 public:
  BusyLoops() {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (::sched_getaffinity(0, sizeof mine, &mine) != 0) return;
    bool first = true;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &mine)) continue;
      if (first) {
        first = false;
        continue;
      }
      pid_t pid = ::fork();
      if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ::sched_setaffinity(0, sizeof one, &one);
        for (;;) asm volatile("" ::: "memory");
      }
      if (pid > 0) pids_.push_back(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // running before timing starts
  }
  ~BusyLoops() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }
  int count() const { return static_cast<int>(pids_.size()); }

 private:
  std::vector<pid_t> pids_;
};

struct Buffer {
  explicit Buffer(std::int64_t n)
      : data(static_cast<float*>(blobrt_kernels::allocate_host(static_cast<std::size_t>(n) * sizeof(float), 64))) {}
  ~Buffer() { std::free(data); }
  float* data;
};

void run(benchmark::State& state, const OpInfo& info, std::int64_t n, bool one_thread, bool loaded) {
  Buffer x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) {
    x.data[i] = 1.0f + static_cast<float>(i % 7) * 0.125f;
    y.data[i] = 2.0f;
  }
  const int configured = blobrt_kernels::team_size();
  if (one_thread) blobrt_kernels::set_team_size(1);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  float result = 0;
  auto once = [&] {
    switch (info.op) {
      case Op::kAxpy: blobrt_kernels::axpy(n, 0.999f, x.data, y.data); break;
      case Op::kScal: blobrt_kernels::scal(n, -1.0f, x.data); break;
      case Op::kDot: result = blobrt_kernels::dot(n, x.data, y.data); break;
      case Op::kAsum: result = blobrt_kernels::asum(n, x.data); break;
      case Op::kCopy: blobrt_kernels::copy_bytes(y.data, x.data, bytes); break;
      case Op::kMemset: blobrt_kernels::fill_bytes(y.data, 0, bytes); break;
    }
  };
  once();  // first touch, helpers started
  {
    std::unique_ptr<BusyLoops> busy(loaded ? new BusyLoops : nullptr);
    for (auto _ : state) {
      once();
      benchmark::DoNotOptimize(result);
    }
    state.counters["busy_loops"] = busy ? busy->count() : 0;
  }
  state.counters["threads"] = blobrt_kernels::team_size();
  blobrt_kernels::set_team_size(configured);
  state.SetBytesProcessed(state.iterations() * bytes_moved(info.pattern, n, sizeof(float)));
}

}  // namespace

// Quiet runs first: a loaded run can leave the team in a one-thread spell (up to 1 s)
// that a quiet run right after it would measure.
void register_team() {
  std::vector<std::int64_t> sizes = {std::int64_t(1) << 16, std::int64_t(1) << 20};
  if (smoke()) sizes = {std::int64_t(1) << 16};
  struct Mode {
    const char* name;
    bool one_thread, loaded;
  };
  for (Mode mode : {Mode{"team", false, false}, Mode{"one", true, false}, Mode{"loaded", false, true},
                    Mode{"loaded_one", true, true}}) {
    for (const OpInfo& info : kOps) {
      for (std::int64_t n : sizes) {
        reg(name("team", mode.name, info.name, "float", n),
            [info, n, mode](benchmark::State& s) { run(s, info, n, mode.one_thread, mode.loaded); });
      }
    }
  }
}

}  // namespace blobrt::bench
