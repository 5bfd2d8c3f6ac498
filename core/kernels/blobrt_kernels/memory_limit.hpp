// How much memory this process could ever have: the machine's memory and swap, and the
// limit of the control group it runs in (a container's or a batch job's), whichever is less.
// A host buffer larger than that can never be touched whole; where the kernel overcommits,
// malloc grants it anyway and the OOM killer ends the process at the first fill
// (huge_pages.hpp's allocate_host refuses it instead).
// Header-only: used by libblobrt and by the plugins that allocate host memory.
#ifndef BLOBRT_KERNELS_MEMORY_LIMIT_HPP
#define BLOBRT_KERNELS_MEMORY_LIMIT_HPP

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <sys/stat.h>
#include <sys/sysinfo.h>

namespace blobrt_kernels {

constexpr unsigned long long kNoMemoryLimit = ~0ULL;

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

// The least memory + swap limit on the way from this process's cgroup up to the root of its
// hierarchy (a parent's limit binds its children): cgroup v2's memory.max + memory.swap.max,
// v1's memory.memsw.limit_in_bytes or memory.limit_in_bytes + the machine's swap, the less.
// kNoMemoryLimit when there is none, or nothing can be read. Where the path /proc gives is
// not below the mounted root (a container's own cgroup mounted as the root, without a cgroup
// namespace), the mounted root's limits are read: they are the container's.
// The two paths are parameters for the tests; the defaults are the kernel's.
inline unsigned long long cgroup_memory_limit(const char* proc_cgroup = "/proc/self/cgroup",
                                              const char* cgroup_root = "/sys/fs/cgroup",
                                              unsigned long long machine_swap = kNoMemoryLimit) {
  using namespace memory_limit_detail;
  std::string path;
  bool v2 = false;
  if (!memory_cgroup_path(proc_cgroup, &path, &v2)) return kNoMemoryLimit;
  const std::string mount = v2 ? std::string(cgroup_root) : std::string(cgroup_root) + "/memory";
  if (!is_directory(mount)) return kNoMemoryLimit;
  std::string dir = mount + (path == "/" ? "" : path);
  if (!is_directory(dir)) dir = mount;
  unsigned long long least = kNoMemoryLimit;
  while (true) {
    unsigned long long limit;
    if (v2) {
      // Without swap accounting (no memory.swap.max) the group may use all of the machine's.
      limit = add(read_limit(dir + "/memory.max"), least_of(read_limit(dir + "/memory.swap.max"), machine_swap));
    } else {
      limit = least_of(read_limit(dir + "/memory.memsw.limit_in_bytes"),
                       add(read_limit(dir + "/memory.limit_in_bytes"), machine_swap));
    }
    least = least_of(least, limit);
    if (dir.size() <= mount.size()) break;
    dir.erase(dir.rfind('/'));
  }
  return least;
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
inline unsigned long long process_memory_limit() {
  unsigned long long swap = kNoMemoryLimit;
  const unsigned long long machine = machine_memory_and_swap(&swap);
  const unsigned long long group = cgroup_memory_limit("/proc/self/cgroup", "/sys/fs/cgroup", swap);
  return group < machine ? group : machine;
}

}  // namespace blobrt_kernels

#endif
