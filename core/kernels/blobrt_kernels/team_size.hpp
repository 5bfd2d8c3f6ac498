// How many threads (the caller included) split level-1 work: decided once per process
// (per shared object: see thread_team.hpp), from, in this order,
//   1. BLOBRT_NUM_THREADS, an integer from 1 to kMaxThreads;
//   2. OMP_NUM_THREADS (its first value), which users set to keep OpenMP programs, and
//      blobrt before its own team, on fewer cores;
//   3. the CPUs this process may run on (sched_getaffinity: taskset, cgroups' cpusets,
//      an MPI launcher's binding) divided by the ranks sharing this node, so that several
//      MPI ranks on a node do not each start a thread per core and wait on each other.
// A value that is not a number in range is ignored, and said to the caller's `warn`:
// libblobrt passes its log when it makes its host device (once per process: every team,
// the plugins' too, reads the same variables); a plugin, which cannot log through
// libblobrt, passes none. The header writes nothing itself.
#ifndef BLOBRT_KERNELS_TEAM_SIZE_HPP
#define BLOBRT_KERNELS_TEAM_SIZE_HPP

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include "blobrt/environment.hpp"

namespace blobrt_kernels {

constexpr int kMaxThreads = 64;  // ThreadTeam deals a job into at most 64 ranges

// Receives one message per variable that is set but not a thread count (no prefix: the
// receiver's log adds its own).
using TeamSizeWarning = void (*)(const std::string& message);

namespace team_size_detail {

// A whole decimal number in [low, high], else nullopt.
inline std::optional<long> parse_count(const std::string& text, long low, long high) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  long value = std::strtol(text.c_str(), nullptr, 10);
  if (value < low || value > high) return std::nullopt;
  return value;
}

// A thread count from a variable; a set but bad value is said to `warn` and ignored.
inline std::optional<int> count_from(const char* name, const std::optional<std::string>& value,
                                     TeamSizeWarning warn) {
  if (!value) return std::nullopt;
  if (auto n = parse_count(*value, 1, kMaxThreads)) return static_cast<int>(*n);
  if (warn) {
    warn(std::string(name) + "='" + *value + "' is not a thread count from 1 to " + std::to_string(kMaxThreads) +
         "; ignored");
  }
  return std::nullopt;
}

// The CPUs in this process's affinity mask (the size of the set grows until the kernel
// accepts it: machines with more than 1024 CPUs exist); 1 if it cannot be read.
inline int affinity_cpus() {
  for (int cpus = 1024; cpus <= (1 << 16); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) return 1;
    std::size_t size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(size, set);
    int rc = ::sched_getaffinity(0, size, set);
    int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count > 0 ? count : 1;
    if (errno != EINVAL) return 1;
  }
  return 1;
}

// Slurm's per-node task counts, "2(x3),1": the entry for node `node` (here 2 for nodes
// 0-2, 1 for node 3).
inline std::optional<long> slurm_tasks_on_node(const std::string& list, long node) {
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t comma = list.find(',', at);
    std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    long repeat = 1;
    std::size_t paren = item.find("(x");
    if (paren != std::string::npos) {
      auto r = parse_count(item.substr(paren + 2, item.size() - paren - 3), 1, 1 << 24);
      if (!r || item.back() != ')') return std::nullopt;
      repeat = *r;
      item.resize(paren);
    }
    auto tasks = parse_count(item, 1, 1 << 20);
    if (!tasks) return std::nullopt;
    if (node < repeat) return tasks;
    node -= repeat;
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return std::nullopt;
}

// Processes of this MPI job on this node: Open MPI, MPICH/Intel MPI (Hydra), or a task
// started by srun. 1 when not under a launcher that says.
inline long local_ranks() {
  namespace env = blobrt::environment;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    if (auto v = env::get(name)) {
      if (auto n = parse_count(*v, 1, 1 << 20)) return *n;
    }
  }
  auto tasks = env::get("SLURM_STEP_TASKS_PER_NODE");
  auto node = env::get("SLURM_NODEID");
  if (tasks && node) {
    if (auto id = parse_count(*node, 0, 1 << 24)) {
      if (auto n = slurm_tasks_on_node(*tasks, *id)) return *n;
    }
  }
  return 1;
}

}  // namespace team_size_detail

// The team size for this process, at least 1 and at most kMaxThreads. When each rank is
// already bound to cores of its own, the division by the ranks per node may leave cores
// idle; BLOBRT_NUM_THREADS says otherwise.
inline int configured_team_size(TeamSizeWarning warn = nullptr) {
  namespace d = team_size_detail;
  namespace env = blobrt::environment;
  if (auto n = d::count_from("BLOBRT_NUM_THREADS", env::get("BLOBRT_NUM_THREADS"), warn)) return *n;
  if (auto omp = env::get("OMP_NUM_THREADS")) {
    // A list ("4,2") gives the count of each nesting level; the first is the outer one.
    if (auto n = d::count_from("OMP_NUM_THREADS", omp->substr(0, omp->find(',')), warn)) return *n;
  }
  long threads = d::affinity_cpus() / d::local_ranks();
  return static_cast<int>(threads < 1 ? 1 : threads > kMaxThreads ? kMaxThreads : threads);
}

}  // namespace blobrt_kernels

#endif
