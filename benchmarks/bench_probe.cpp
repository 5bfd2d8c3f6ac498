// The streaming-bandwidth probe: plain OpenMP loops on all cores, built with -O3
// -march=native (benchmarks/meson.build), one per access pattern of the level-1
// operations. Its GB/s at each size is the ceiling each blobrt result is divided by.
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "bench_common.hpp"

namespace blobrt::bench {
namespace {

template <typename T>
struct Vectors {
  explicit Vectors(std::int64_t n) : n(n) {
    x = static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64));
    y = static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64));
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
  std::int64_t n;
  T* x;
  T* y;
};

// One pass of a pattern. PARALLEL_PASS runs an OpenMP loop over all cores; SERIAL_PASS
// the plain vectorised loop (entering even a one-thread OpenMP region costs ~300 ns).
#define PASS_BODY(OMP_FOR, OMP_SUM)                                      \
  switch (pattern) {                                                     \
    case Pattern::kFill:                                                 \
      _Pragma(OMP_FOR) for (std::int64_t i = 0; i < n; ++i) x[i] = a;    \
      break;                                                             \
    case Pattern::kCopy:                                                 \
      _Pragma(OMP_FOR) for (std::int64_t i = 0; i < n; ++i) y[i] = x[i]; \
      break;                                                             \
    case Pattern::kSum: {                                                \
      T s = 0;                                                           \
      _Pragma(OMP_SUM) for (std::int64_t i = 0; i < n; ++i) s += x[i];   \
      benchmark::DoNotOptimize(s);                                       \
      break;                                                             \
    }                                                                    \
    case Pattern::kDot: {                                                \
      T s = 0;                                                           \
      _Pragma(OMP_SUM) for (std::int64_t i = 0; i < n; ++i) s += x[i] * y[i]; \
      benchmark::DoNotOptimize(s);                                       \
      break;                                                             \
    }                                                                    \
    case Pattern::kTriad:                                                \
      _Pragma(OMP_FOR) for (std::int64_t i = 0; i < n; ++i) y[i] += a * x[i]; \
      break;                                                             \
    case Pattern::kScale:                                                \
      _Pragma(OMP_FOR) for (std::int64_t i = 0; i < n; ++i) x[i] = -x[i];       \
      break;                                                             \
  }

template <typename T>
void parallel_pass(Pattern pattern, std::int64_t n, T a, T* __restrict x, T* __restrict y) {
  PASS_BODY("omp parallel for simd schedule(static)", "omp parallel for simd schedule(static) reduction(+ : s)")
}

template <typename T>
void serial_pass(Pattern pattern, std::int64_t n, T a, T* __restrict x, T* __restrict y) {
  PASS_BODY("omp simd", "omp simd reduction(+ : s)")
}

template <typename T>
void probe(benchmark::State& state, Pattern pattern, std::int64_t n) {
  Vectors<T> v(n);
  T* __restrict x = v.x;
  T* __restrict y = v.y;
  const T a = T(0.999);
  // Small vectors run on one thread: that is what a level-1 call of that size gets.
  const bool parallel = n >= (1 << 15);
  for (auto _ : state) {
    if (parallel) {
      parallel_pass<T>(pattern, n, a, x, y);
    } else {
      serial_pass<T>(pattern, n, a, x, y);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes_moved(pattern, n, sizeof(T)));
  state.counters["threads"] = parallel ? omp_get_max_threads() : 1;
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
