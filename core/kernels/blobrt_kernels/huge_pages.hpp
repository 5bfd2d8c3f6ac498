// Large host buffers on transparent huge pages. First touching 64 MiB costs 16,384 page
// faults with 4 KiB pages and 32 with 2 MiB pages (docs/performance.md); with THP in
// "madvise" mode (Debian's default) a buffer gets them only when asked.
// Header-only: used by libblobrt and by the plugins that allocate host memory.
#ifndef BLOBRT_KERNELS_HUGE_PAGES_HPP
#define BLOBRT_KERNELS_HUGE_PAGES_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <sys/mman.h>

#include "blobrt_kernels/memory_limit.hpp"

namespace blobrt_kernels {

constexpr std::size_t kHugePage = std::size_t(2) << 20;
// Below this, ordinary pages: the rounding would waste more than it saves.
constexpr std::size_t kHugePageThreshold = std::size_t(4) << 20;

// Asks for huge pages on the whole 2 MiB-aligned part of [pointer, pointer + bytes), which
// must not have been touched yet to benefit. Harmless if THP is off.
inline void advise_huge_pages(void* pointer, std::size_t bytes) {
  if (bytes < kHugePageThreshold) return;
  std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(pointer) + kHugePage - 1) & ~(kHugePage - 1);
  std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(pointer) + bytes) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// True when `bytes` exceed all the memory this process could ever have: the machine's memory
// and swap together, or its cgroup's limit if less (memory_limit.hpp). Every host buffer
// blobrt hands out is touched whole (Caffe zero-fills at first touch), so such a request can
// never be met; where the kernel overcommits without limit (vm.overcommit_memory=1, gVisor),
// or a control group's limit is below what malloc grants, the first fill would meet the OOM
// killer. Refused instead, as an allocation failure, at any size once the limit is known:
// requests from 1 MiB up read it (at most once a second and once per process:
// cached_process_memory_limit), smaller ones compare with what was read last.
inline bool beyond_memory_and_swap(std::size_t bytes) {
  constexpr std::size_t kReadsTheLimit = std::size_t(1) << 20;
  const unsigned long long limit =
      bytes >= kReadsTheLimit ? cached_process_memory_limit() : last_process_memory_limit();
  return bytes > limit;
}

// aligned_alloc with `alignment` (a power of two), on huge pages when large. Free with free().
// nullptr when it cannot be had (beyond_memory_and_swap included).
inline void* allocate_host(std::size_t bytes, std::size_t alignment) {
  bool huge = bytes >= kHugePageThreshold;
  std::size_t align = huge ? kHugePage : alignment;
  std::size_t rounded = (bytes + align - 1) / align * align;
  if (rounded == 0) rounded = align;
  if (rounded < bytes || beyond_memory_and_swap(rounded)) return nullptr;
  void* pointer = std::aligned_alloc(align, rounded);
  if (pointer && huge) advise_huge_pages(pointer, rounded);
  return pointer;
}

}  // namespace blobrt_kernels

#endif
