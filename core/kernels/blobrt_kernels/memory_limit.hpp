// How much memory this process could ever have: the machine's memory and swap, and the
// limit of the control group it runs in (a container's or a batch job's), whichever is less.
// A host buffer larger than that can never be touched whole; where the kernel overcommits,
// malloc grants it anyway and the OOM killer ends the process at the first fill
// (huge_pages.hpp's allocate_host refuses it instead).
// Header-only: used by libblobrt and by the plugins that allocate host memory.
#ifndef BLOBRT_KERNELS_MEMORY_LIMIT_HPP
#define BLOBRT_KERNELS_MEMORY_LIMIT_HPP

#include <atomic>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "blobrt_kernels/fork_generation.hpp"

#include <sys/stat.h>
#include <sys/sysinfo.h>

namespace blobrt_kernels {

inline constexpr unsigned long long kNoMemoryLimit = ~0ULL;

namespace memory_limit_detail {

// The number a cgroup limit file holds; kNoMemoryLimit for "max", a missing or unreadable
// file, or anything else.
inline unsigned long long read_limit(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (!file) return kNoMemoryLimit;
  char text[64] = {};
  const bool got = std::fgets(text, sizeof text, file) != nullptr;
  std::fclose(file);
  if (!got || text[0] < '0' || text[0] > '9') return kNoMemoryLimit;  // "max", "", "-1"
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || (*end != '\n' && *end != '\0')) return kNoMemoryLimit;
  return value;
}

// The values of two keys of a "key value" file (v1's memory.stat), read in one pass;
// kNoMemoryLimit for a key that is absent.
inline void read_stats(const std::string& path, const char* const (&keys)[2], unsigned long long (&values)[2]) {
  values[0] = values[1] = kNoMemoryLimit;
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (!file) return;
  char line[256];
  while (std::fgets(line, sizeof line, file)) {
    for (int i = 0; i < 2; ++i) {
      const std::size_t length = std::strlen(keys[i]);
      if (std::strncmp(line, keys[i], length) == 0 && line[length] == ' ' && line[length + 1] >= '0' &&
          line[length + 1] <= '9') {
        values[i] = std::strtoull(line + length + 1, nullptr, 10);
      }
    }
  }
  std::fclose(file);
}

inline bool regular_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

inline bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

inline unsigned long long least_of(unsigned long long a, unsigned long long b) { return a < b ? a : b; }

inline unsigned long long add(unsigned long long a, unsigned long long b) {
  return (a == kNoMemoryLimit || b == kNoMemoryLimit || a + b < a) ? kNoMemoryLimit : a + b;
}

// The process's cgroup path in the hierarchy that has the memory controller: v1's
// "N:...memory...:/path" line, else v2's "0::/path" (with `*v2` set). False when neither.
inline bool memory_cgroup_path(const char* proc_cgroup, std::string* path, bool* v2) {
  std::FILE* file = std::fopen(proc_cgroup, "re");
  if (!file) return false;
  std::string unified;
  bool found_v1 = false, found_v2 = false;
  char line[4096];
  while (std::fgets(line, sizeof line, file)) {
    std::string text(line);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    const auto first = text.find(':');
    const auto second = first == std::string::npos ? first : text.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = "," + text.substr(first + 1, second - first - 1) + ",";
    if (controllers.find(",memory,") != std::string::npos) {
      *path = text.substr(second + 1);
      found_v1 = true;
    } else if (text.compare(0, first, "0") == 0 && controllers == ",,") {
      unified = text.substr(second + 1);
      found_v2 = true;
    }
  }
  std::fclose(file);
  if (found_v1) {
    *v2 = false;
    return true;
  }
  if (found_v2) {
    *path = unified;
    *v2 = true;
  }
  return found_v2;
}

}  // namespace memory_limit_detail

// The memory + swap this process's control group may ever use; kNoMemoryLimit when it has
// no limit, or nothing can be read. `machine_swap` is the machine's swap (a group may use it
// where its own swap is not limited); kNoMemoryLimit for unknown.
//  - cgroup v2: the least memory.max on the way from the process's group up to the root (a
//    parent's limit binds its children) plus the least memory.swap.max, swap at most the
//    machine's (without swap accounting there is no memory.swap.max: the machine's).
//  - cgroup v1: the group's memory.stat, whose hierarchical_memory_limit and
//    hierarchical_memsw_limit the kernel computes along the hierarchy (use_hierarchy
//    included): memsw, or memory + the machine's swap, the less.
// Where the path /proc gives is not below the mounted root (a container's own group mounted
// as the root, without a cgroup namespace), the mounted root's limits are read: they are the
// container's. On a hybrid system the v2 hierarchy is the one mounted at ROOT/unified.
// The paths are parameters for the tests; process_memory_limit passes the kernel's.
inline unsigned long long cgroup_memory_limit(const char* proc_cgroup, const char* cgroup_root,
                                              unsigned long long machine_swap) {
  using namespace memory_limit_detail;
  std::string path;
  bool v2 = false;
  if (!memory_cgroup_path(proc_cgroup, &path, &v2)) return kNoMemoryLimit;
  std::string mount = std::string(cgroup_root) + (v2 ? "" : "/memory");
  if (v2 && !regular_file(mount + "/cgroup.controllers") && regular_file(mount + "/unified/cgroup.controllers")) {
    mount += "/unified";
  }
  if (!is_directory(mount)) return kNoMemoryLimit;
  std::string dir = mount + (path == "/" ? "" : path);
  if (!is_directory(dir)) dir = mount;
  if (!v2) {
    unsigned long long limits[2];  // memory, memory + swap
    read_stats(dir + "/memory.stat", {"hierarchical_memory_limit", "hierarchical_memsw_limit"}, limits);
    return least_of(limits[1], add(limits[0], machine_swap));
  }
  unsigned long long memory = kNoMemoryLimit, swap = machine_swap;
  while (true) {
    memory = least_of(memory, read_limit(dir + "/memory.max"));
    swap = least_of(swap, read_limit(dir + "/memory.swap.max"));
    if (dir.size() <= mount.size()) break;
    dir.erase(dir.rfind('/'));
  }
  return add(memory, swap);
}

// The machine's memory and swap together; kNoMemoryLimit when sysinfo fails.
inline unsigned long long machine_memory_and_swap(unsigned long long* swap = nullptr) {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return kNoMemoryLimit;
  const unsigned long long unit = info.mem_unit ? info.mem_unit : 1;
  if (swap) *swap = static_cast<unsigned long long>(info.totalswap) * unit;
  return (static_cast<unsigned long long>(info.totalram) + info.totalswap) * unit;
}

// The most memory this process could ever have: the machine's, or its cgroup's if less.
// Never throws (allocate_host is called from noexcept allocators): kNoMemoryLimit for the
// group's part when its few strings cannot be had.
inline unsigned long long process_memory_limit() noexcept {
  unsigned long long swap = kNoMemoryLimit;
  const unsigned long long machine = machine_memory_and_swap(&swap);
  unsigned long long group = kNoMemoryLimit;
  try {
    group = cgroup_memory_limit("/proc/self/cgroup", "/sys/fs/cgroup", swap);
  } catch (...) {
  }
  return group < machine ? group : machine;
}

namespace memory_limit_detail {

// The last limit read, when, and by which process (a forked child, maybe moved into another
// group, reads anew). One set per shared object that includes this header: each reads the
// same files.
struct LimitCache {
  std::atomic<unsigned long long> limit{kNoMemoryLimit};
  std::atomic<long long> read_at_ns{0};
  std::atomic<std::uint64_t> reader{0};  // the fork generation that read it
};
inline LimitCache& limit_cache() {
  static LimitCache cache;
  return cache;
}

}  // namespace memory_limit_detail

// process_memory_limit, read at most once a second in a process: reading it costs a few file
// opens (tens of microseconds), the price of a 1 MiB page-faulting fill, so an allocator asks
// this rather than the files. A process moved into another control group sees the new
// limit within a second. Never throws.
inline unsigned long long cached_process_memory_limit() noexcept {
  auto& cache = memory_limit_detail::limit_cache();
  // The coarse clock (a few milliseconds' resolution, no hardware read) is fine for a
  // one-second cache.
  timespec clock{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &clock);
  const long long now = static_cast<long long>(clock.tv_sec) * 1000000000LL + clock.tv_nsec + 1;  // never 0
  // fork_generation.hpp's counter, not getpid(): a load where getpid is a system call.
  const std::uint64_t self = fork_generation();
  const long long read_at = cache.read_at_ns.load(std::memory_order_acquire);
  if (read_at != 0 && now - read_at < 1000000000LL && cache.reader.load(std::memory_order_relaxed) == self) {
    return cache.limit.load(std::memory_order_relaxed);
  }
  const unsigned long long limit = process_memory_limit();
  cache.limit.store(limit, std::memory_order_relaxed);
  cache.reader.store(self, std::memory_order_relaxed);
  cache.read_at_ns.store(now, std::memory_order_release);
  return limit;
}

// What cached_process_memory_limit read last, without reading anything or asking the
// kernel (not even getpid: small allocations pay one load); kNoMemoryLimit before the first
// read. A forked child sees its parent's until it reads its own.
inline unsigned long long last_process_memory_limit() noexcept {
  return memory_limit_detail::limit_cache().limit.load(std::memory_order_relaxed);
}

}  // namespace blobrt_kernels

#endif
