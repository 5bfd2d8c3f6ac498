// The streaming-bandwidth probe: the ceiling each blobrt result is divided by, per access
// pattern of the level-1 operations. To be an upper bound rather than a guess it takes,
// per pattern and size, the fastest of (chosen before timing, named in the label):
//  - loop:   plain OpenMP loops on all cores, built with -O3 -march=native;
//  - stream: the same with non-temporal (streaming) stores, which skip the read of each
//            destination line that an ordinary store costs (what a good memset/memcpy does);
//  - libc:   memset / memcpy, one chunk per thread.
// Memory comes from the allocator blobrt's host memory uses (blobrt_kernels::allocate_host:
// transparent huge pages from 4 MiB), so that page size is not what separates the two.
#include <omp.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "bench_common.hpp"
#include "blobrt_kernels/huge_pages.hpp"

namespace blobrt::bench {
namespace {

template <typename T>
struct Vectors {
  explicit Vectors(std::int64_t n) : n(n) {
    const std::size_t bytes = static_cast<std::size_t>(n ? n : 1) * sizeof(T);
    x = static_cast<T*>(blobrt_kernels::allocate_host(bytes, 64));
    y = static_cast<T*>(blobrt_kernels::allocate_host(bytes, 64));
    // First touch by the same threads, in the same static chunks, as the timed loops.
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = T(1) + T(i % 7) * T(0.125);
      y[i] = T(2) - T(i % 5) * T(0.25);
    }
  }
  ~Vectors() {
    std::free(x);
    std::free(y);
  }
  Vectors(const Vectors&) = delete;
  Vectors& operator=(const Vectors&) = delete;
  std::int64_t n;
  T* x;
  T* y;
};

enum class Variant { kLoop, kStream, kLibc };
const char* to_string(Variant v) { return v == Variant::kLoop ? "loop" : v == Variant::kStream ? "stream" : "libc"; }

bool applies(Variant v, Pattern p) {
  switch (v) {
    case Variant::kLoop: return true;
#if defined(__SSE2__)
    case Variant::kStream: return p != Pattern::kSum && p != Pattern::kDot;
#else
    case Variant::kStream: return false;
#endif
    case Variant::kLibc: return p == Pattern::kFill || p == Pattern::kCopy;
  }
  return false;
}

#if defined(__SSE2__)
inline void stream_store(float* p, const float* v) { _mm_stream_ps(p, _mm_loadu_ps(v)); }
inline void stream_store(double* p, const double* v) { _mm_stream_pd(p, _mm_loadu_pd(v)); }

// out[i] = f(i) over [b, e), 16-byte streaming stores where aligned.
template <typename T, typename F>
void stream_chunk(T* out, std::int64_t b, std::int64_t e, F f) {
  constexpr std::int64_t kLanes = 16 / sizeof(T);
  std::int64_t i = b;
  for (; i < e && (reinterpret_cast<std::uintptr_t>(out + i) & 15); ++i) out[i] = f(i);
  for (; i + kLanes <= e; i += kLanes) {
    T v[kLanes];
    for (std::int64_t k = 0; k < kLanes; ++k) v[k] = f(i + k);
    stream_store(out + i, v);
  }
  for (; i < e; ++i) out[i] = f(i);
}
#endif

// One pattern over [b, e); returns the partial sum for sum and dot.
template <typename T>
T chunk(Variant v, Pattern p, T a, T* __restrict x, T* __restrict y, std::int64_t b, std::int64_t e) {
  T s = 0;
  if (v == Variant::kLibc) {
    if (p == Pattern::kFill) std::memset(x + b, 0, static_cast<std::size_t>(e - b) * sizeof(T));
    if (p == Pattern::kCopy) std::memcpy(y + b, x + b, static_cast<std::size_t>(e - b) * sizeof(T));
    return s;
  }
#if defined(__SSE2__)
  if (v == Variant::kStream) {
    switch (p) {
      case Pattern::kFill: stream_chunk(x, b, e, [a](std::int64_t) { return a; }); break;
      case Pattern::kCopy: stream_chunk(y, b, e, [x](std::int64_t i) { return x[i]; }); break;
      case Pattern::kTriad: stream_chunk(y, b, e, [a, x, y](std::int64_t i) { return y[i] + a * x[i]; }); break;
      case Pattern::kScale: stream_chunk(x, b, e, [x](std::int64_t i) { return -x[i]; }); break;
      case Pattern::kSum:
      case Pattern::kDot: break;
    }
    return s;
  }
#endif
  switch (p) {
    case Pattern::kFill:
#pragma omp simd
      for (std::int64_t i = b; i < e; ++i) x[i] = a;
      break;
    case Pattern::kCopy:
#pragma omp simd
      for (std::int64_t i = b; i < e; ++i) y[i] = x[i];
      break;
    case Pattern::kSum:
#pragma omp simd reduction(+ : s)
      for (std::int64_t i = b; i < e; ++i) s += x[i];
      break;
    case Pattern::kDot:
#pragma omp simd reduction(+ : s)
      for (std::int64_t i = b; i < e; ++i) s += x[i] * y[i];
      break;
    case Pattern::kTriad:
#pragma omp simd
      for (std::int64_t i = b; i < e; ++i) y[i] += a * x[i];
      break;
    case Pattern::kScale:
#pragma omp simd
      for (std::int64_t i = b; i < e; ++i) x[i] = -x[i];
      break;
  }
  return s;
}

// One pass over all n: static chunks of 64-byte lines, one per thread, or the calling
// thread alone for small n (entering even a one-thread OpenMP region costs ~300 ns).
template <typename T>
void pass(Variant v, Pattern p, std::int64_t n, T a, T* x, T* y, bool parallel) {
  T total = 0;
  if (!parallel) {
    total = chunk<T>(v, p, a, x, y, 0, n);
  } else {
#pragma omp parallel reduction(+ : total)
    {
      const std::int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
      constexpr std::int64_t kLine = 64 / sizeof(T);
      const std::int64_t per = (n / kLine + threads - 1) / threads * kLine;
      const std::int64_t b = std::min(n, t * per), e = std::min(n, b + per);
      total += chunk<T>(v, p, a, x, y, b, e);
    }
  }
#if defined(__SSE2__)
  if (v == Variant::kStream) _mm_sfence();
#endif
  benchmark::DoNotOptimize(total);
}

template <typename T>
void probe(benchmark::State& state, Pattern pattern, std::int64_t n) {
  Vectors<T> vectors(n);
  T* x = vectors.x;
  T* y = vectors.y;
  const T a = T(0.999);
  const bool parallel = n >= (1 << 15);  // what a level-1 call of that size gets
  // The fastest variant at this size, from a few untimed passes of each.
  Variant best = Variant::kLoop;
  double best_seconds = std::numeric_limits<double>::infinity();
  for (Variant v : {Variant::kLoop, Variant::kStream, Variant::kLibc}) {
    if (!applies(v, pattern)) continue;
    const int passes = n >= (1 << 22) ? 3 : 50;
    pass<T>(v, pattern, n, a, x, y, parallel);  // warm-up
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < passes; ++i) pass<T>(v, pattern, n, a, x, y, parallel);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds < best_seconds) {
      best_seconds = seconds;
      best = v;
    }
  }
  for (auto _ : state) {
    pass<T>(best, pattern, n, a, x, y, parallel);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes_moved(pattern, n, sizeof(T)));
  state.counters["threads"] = parallel ? omp_get_max_threads() : 1;
  state.SetLabel(to_string(best));
}

template <typename T>
void register_type() {
  for (Pattern p : {Pattern::kFill, Pattern::kCopy, Pattern::kSum, Pattern::kDot, Pattern::kTriad,
                    Pattern::kScale}) {
    for (std::int64_t n : sizes()) {
      reg(name("probe", "stream", to_string(p), dtype_name<T>(), n),
                                   [p, n](benchmark::State& s) { probe<T>(s, p, n); });
    }
  }
}

}  // namespace

void register_probe() {
  register_type<float>();
  register_type<double>();
}

}  // namespace blobrt::bench
