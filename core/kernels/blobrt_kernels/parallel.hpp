// Splitting level-1 work across cores. Level-1 BLAS is memory-bound and one core cannot
// saturate the memory bus (BLIS's level-1 routines run on one thread), so large vectors
// are cut into one contiguous, cache-line-aligned chunk per OpenMP thread. Small vectors
// stay on the calling thread: a fork/join would cost more than the work.
// Header-only: used by libblobrt's host device and by the BLIS plugin alike.
#ifndef BLOBRT_KERNELS_PARALLEL_HPP
#define BLOBRT_KERNELS_PARALLEL_HPP

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <pthread.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace blobrt_kernels {

// Below this many elements the work stays on one thread.
constexpr std::int64_t kParallelThreshold = std::int64_t(1) << 15;
// Chunk boundaries fall on multiples of this many elements (64 bytes for float).
constexpr std::int64_t kChunkAlign = 16;
constexpr int kMaxThreads = 256;

// libgomp's thread pool does not survive fork(): a parallel region in the child of a
// process that already ran one hangs. After a fork every split runs on the calling thread.
// Each shared object that includes this header keeps (and registers) its own flag.
inline std::atomic<bool>& in_forked_child() {
  static std::atomic<bool> flag{false};
  return flag;
}
inline const bool fork_flag_registered =
    (::pthread_atfork(nullptr, nullptr, [] { in_forked_child().store(true, std::memory_order_relaxed); }), true);

// libgomp ends the process ("Thread creation failed") when it cannot start a thread for a
// parallel region. Before the first region of a team size larger than any so far (when
// libgomp starts its threads, which it then keeps), the same number of threads is started
// and joined here; if that fails (RLIMIT_NPROC, a cgroup's pids.max, no memory for stacks),
// the work runs on the calling thread from then on. A limit reached in the moment between
// this check and libgomp's own start is not covered.
inline void* thread_probe(void*) { return nullptr; }
inline bool threads_can_start(int team) {
  static std::atomic<int> verified{1};  // the largest team known to start
  static std::atomic<bool> refused{false};
  if (team <= verified.load(std::memory_order_acquire)) return true;
  if (refused.load(std::memory_order_relaxed)) return false;
  pthread_t started[kMaxThreads];
  int count = 0;
  while (count < team - 1 && ::pthread_create(&started[count], nullptr, thread_probe, nullptr) == 0) ++count;
  for (int i = 0; i < count; ++i) ::pthread_join(started[i], nullptr);
  if (count < team - 1) {
    refused.store(true, std::memory_order_relaxed);
    return false;
  }
  int known = verified.load(std::memory_order_relaxed);
  while (known < team && !verified.compare_exchange_weak(known, team, std::memory_order_release)) {
  }
  return true;
}

inline int worker_count(std::int64_t n, std::int64_t threshold = kParallelThreshold) {
#ifdef _OPENMP
  if (n < threshold || in_forked_child().load(std::memory_order_relaxed)) return 1;
  int threads = omp_get_max_threads();
  // At least half a threshold per thread, at most kMaxThreads.
  std::int64_t useful = std::max<std::int64_t>(1, n / (threshold / 2));
  int team = static_cast<int>(std::min<std::int64_t>({threads, useful, kMaxThreads}));
  return team > 1 && !threads_can_start(team) ? 1 : team;
#else
  (void)n;
  (void)threshold;
  return 1;
#endif
}

inline void chunk_of(std::int64_t n, int part, int parts, std::int64_t* begin, std::int64_t* end) {
  std::int64_t size = (n + parts - 1) / parts;
  size = (size + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  *begin = std::min(n, part * size);
  *end = std::min(n, *begin + size);
}

// fn(begin, end) over [0, n), one chunk per thread.
template <typename Fn>
void parallel_for(std::int64_t n, Fn fn, std::int64_t threshold = kParallelThreshold) {
  int parts = worker_count(n, threshold);
  if (parts <= 1) {
    if (n > 0) fn(std::int64_t(0), n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(parts)
  {
    std::int64_t begin, end;
    chunk_of(n, omp_get_thread_num(), omp_get_num_threads(), &begin, &end);
    if (begin < end) fn(begin, end);
  }
#endif
}

// Sum of fn(begin, end) over the chunks, added in chunk order: the same result for the
// same thread count, whatever the scheduling.
template <typename Fn>
double parallel_sum(std::int64_t n, Fn fn) {
  int parts = worker_count(n);
  if (parts <= 1) return n > 0 ? fn(std::int64_t(0), n) : 0.0;
  double partial[kMaxThreads] = {};
  int used = parts;
#ifdef _OPENMP
#pragma omp parallel num_threads(parts)
  {
    std::int64_t begin, end;
    int t = omp_get_thread_num();
#pragma omp single
    used = omp_get_num_threads();
    chunk_of(n, t, used, &begin, &end);
    if (begin < end) partial[t] = fn(begin, end);
  }
#endif
  double sum = 0;
  for (int t = 0; t < used; ++t) sum += partial[t];
  return sum;
}

}  // namespace blobrt_kernels

#endif
