// Splitting level-1 work across cores. Level-1 BLAS is memory-bound and one core cannot
// saturate the memory bus (BLIS's level-1 routines run on one thread), so large vectors
// are cut into cache-line-aligned chunks that the calling thread and a team of helper
// threads claim one at a time (thread_team.hpp: nobody waits for a thread that is not
// running). Small vectors stay on the calling thread: sharing would cost more than the
// work. The chunks depend on n alone, never on the team, so every result, reductions
// included, is the same whatever thread ran which chunk and however large the team is.
//
// Header-only: libblobrt's host device, the BLIS plugin and the OpenCL plugin (its host
// path) each include it, and each of these shared objects has a team of its own (the
// accessor is hidden): a process that uses host and BLIS kernels in turn has two teams,
// whose helpers sleep while the other works.
#ifndef BLOBRT_KERNELS_PARALLEL_HPP
#define BLOBRT_KERNELS_PARALLEL_HPP

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdint>

#include "blobrt_kernels/fork_generation.hpp"
#include "blobrt_kernels/team_size.hpp"
#include "blobrt_kernels/thread_team.hpp"

namespace blobrt_kernels {

// Below this many elements the work stays on one thread.
constexpr std::int64_t kParallelThreshold = std::int64_t(1) << 15;
// Chunk boundaries fall on multiples of this many elements (64 bytes for float).
constexpr std::int64_t kChunkAlign = 16;
// A job has at most this many chunks: enough to balance a team that loses a member
// midway, few enough that claiming them costs nothing next to the work.
constexpr int kMaxChunks = 64;
static_assert(kMaxChunks <= ThreadTeam::kMaxJobChunks, "the claim word holds the chunk count");

// This shared object's team, sized from the environment on first use (team_size.hpp).
// Never destroyed (a static destructor could run while another thread still uses it);
// its helpers are stopped and joined at exit (thread_team.hpp says why), except in a
// fork()ed child, which has none.
__attribute__((visibility("hidden"))) inline ThreadTeam& team() {
  static ThreadTeam* const instance = [] {
    auto* created = new ThreadTeam(configured_team_size());
    std::atexit([] {
      if (!in_forked_child()) team().stop();
    });
    return created;
  }();
  return *instance;
}

// The threads a large job is shared by, and a way to change it (tests, benchmarks).
inline int team_size() { return team().size(); }
inline void set_team_size(int threads) { team().set_size(threads < kMaxThreads ? threads : kMaxThreads); }

// How [0, n) is cut: chunks of `size` elements (the last one shorter), `count` of them.
// At least a quarter of the threshold per chunk, at most kMaxChunks chunks.
struct Chunks {
  std::int64_t size;
  int count;
};
inline Chunks chunks_for(std::int64_t n, std::int64_t threshold = kParallelThreshold) {
  if (n < threshold || n <= 0 || in_forked_child()) return {n, n > 0 ? 1 : 0};
  std::int64_t size = std::max((threshold + 3) / 4, (n + kMaxChunks - 1) / kMaxChunks);
  size = (size + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  return {size, static_cast<int>((n + size - 1) / size)};
}

// fn(begin, end) over [0, n), chunk by chunk, on the caller and the team.
template <typename Fn>
void parallel_for(std::int64_t n, Fn fn, std::int64_t threshold = kParallelThreshold) {
  if (n < threshold) {  // one chunk on the caller (chunks_for's answer), without the call
    if (n > 0) fn(std::int64_t(0), n);
    return;
  }
  const Chunks chunks = chunks_for(n, threshold);
  if (chunks.count <= 1) {
    if (n > 0) fn(std::int64_t(0), n);
    return;
  }
  struct Job {
    Fn* fn;
    std::int64_t n, size;
  } job{&fn, n, chunks.size};
  team().run(chunks.count, [](const void* context, std::int64_t c) {
    const Job& j = *static_cast<const Job*>(context);
    (*j.fn)(c * j.size, std::min(j.n, (c + 1) * j.size));
  }, &job);
}

// Sum of fn(begin, end) over the chunks, added in chunk order: the same result whatever
// the team's size and whoever ran which chunk.
template <typename Fn>
double parallel_sum(std::int64_t n, Fn fn) {
  if (n < kParallelThreshold) return n > 0 ? fn(std::int64_t(0), n) : 0.0;  // as parallel_for
  const Chunks chunks = chunks_for(n);
  if (chunks.count <= 1) return n > 0 ? fn(std::int64_t(0), n) : 0.0;
  double partial[kMaxChunks];
  struct Job {
    Fn* fn;
    double* partial;
    std::int64_t n, size;
  } job{&fn, partial, n, chunks.size};
  team().run(chunks.count, [](const void* context, std::int64_t c) {
    const Job& j = *static_cast<const Job*>(context);
    j.partial[c] = (*j.fn)(c * j.size, std::min(j.n, (c + 1) * j.size));
  }, &job);
  double sum = 0;
  for (int c = 0; c < chunks.count; ++c) sum += partial[c];
  return sum;
}

}  // namespace blobrt_kernels

#endif
