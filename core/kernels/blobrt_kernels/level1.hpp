// Vectorisable level-1 kernels, split across cores for large n (parallel.hpp): the host
// device's implementation, and what the BLIS plugin uses where BLIS itself is far below
// the memory bandwidth. Reductions add float blocks, then block sums in double.
// Header-only: used by libblobrt and by the BLIS plugin alike.
#ifndef BLOBRT_KERNELS_LEVEL1_HPP
#define BLOBRT_KERNELS_LEVEL1_HPP

#include <cmath>
#include <cstdint>
#include <cstring>

#include "blobrt_kernels/parallel.hpp"
#include "blobrt_kernels/stream_copy.hpp"

namespace blobrt_kernels {

// The serial loops, on one chunk.
namespace serial {

template <typename T>
void axpy(std::int64_t n, T alpha, const T* __restrict x, T* __restrict y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <typename T>
void scal(std::int64_t n, T alpha, T* x) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

// Reductions add blocks of kBlock elements in T with SIMD lanes (fast: no widening per
// element), then the block sums in double. A float block sum carries at most
// kBlock/lanes roundings, so the result stays within the conformance tolerance
// (conformance/conformance_checks.hpp) while running at memory speed.
constexpr std::int64_t kBlock = 1024;

template <typename T>
double dot(std::int64_t n, const T* x, const T* y) {
  double sum = 0;
  for (std::int64_t b = 0; b < n; b += kBlock) {
    std::int64_t e = b + kBlock < n ? b + kBlock : n;
    T block = 0;
#pragma omp simd reduction(+ : block)
    for (std::int64_t i = b; i < e; ++i) block += x[i] * y[i];
    sum += block;
  }
  return sum;
}

template <typename T>
double asum(std::int64_t n, const T* x) {
  double sum = 0;
  for (std::int64_t b = 0; b < n; b += kBlock) {
    std::int64_t e = b + kBlock < n ? b + kBlock : n;
    T block = 0;
#pragma omp simd reduction(+ : block)
    for (std::int64_t i = b; i < e; ++i) block += std::fabs(x[i]);
    sum += block;
  }
  return sum;
}

}  // namespace serial

// One chunk, compiled for AVX-512, AVX2 and baseline x86-64; the loader picks the best
// the CPU has (GCC function multi-versioning), so a portable build still runs at the
// speed of a -march=native one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(BLOBRT_NO_CLONES)
#define BLOBRT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BLOBRT_CLONES
#endif

namespace chunk {
BLOBRT_CLONES static void axpy_f(std::int64_t n, float a, const float* x, float* y) { serial::axpy(n, a, x, y); }
BLOBRT_CLONES static void axpy_d(std::int64_t n, double a, const double* x, double* y) { serial::axpy(n, a, x, y); }
BLOBRT_CLONES static void scal_f(std::int64_t n, float a, float* x) { serial::scal(n, a, x); }
BLOBRT_CLONES static void scal_d(std::int64_t n, double a, double* x) { serial::scal(n, a, x); }
BLOBRT_CLONES static double dot_f(std::int64_t n, const float* x, const float* y) { return serial::dot(n, x, y); }
BLOBRT_CLONES static double dot_d(std::int64_t n, const double* x, const double* y) { return serial::dot(n, x, y); }
BLOBRT_CLONES static double asum_f(std::int64_t n, const float* x) { return serial::asum(n, x); }
BLOBRT_CLONES static double asum_d(std::int64_t n, const double* x) { return serial::asum(n, x); }

inline void axpy(std::int64_t n, float a, const float* x, float* y) { axpy_f(n, a, x, y); }
inline void axpy(std::int64_t n, double a, const double* x, double* y) { axpy_d(n, a, x, y); }
inline void scal(std::int64_t n, float a, float* x) { scal_f(n, a, x); }
inline void scal(std::int64_t n, double a, double* x) { scal_d(n, a, x); }
inline double dot(std::int64_t n, const float* x, const float* y) { return dot_f(n, x, y); }
inline double dot(std::int64_t n, const double* x, const double* y) { return dot_d(n, x, y); }
inline double asum(std::int64_t n, const float* x) { return asum_f(n, x); }
inline double asum(std::int64_t n, const double* x) { return asum_d(n, x); }
}  // namespace chunk

template <typename T>
void axpy(std::int64_t n, T alpha, const T* x, T* y) {
  parallel_for(n, [&](std::int64_t b, std::int64_t e) { chunk::axpy(e - b, alpha, x + b, y + b); });
}

template <typename T>
void scal(std::int64_t n, T alpha, T* x) {
  parallel_for(n, [&](std::int64_t b, std::int64_t e) { chunk::scal(e - b, alpha, x + b); });
}

template <typename T>
T dot(std::int64_t n, const T* x, const T* y) {
  return static_cast<T>(
      parallel_sum(n, [&](std::int64_t b, std::int64_t e) { return chunk::dot(e - b, x + b, y + b); }));
}

template <typename T>
T asum(std::int64_t n, const T* x) {
  return static_cast<T>(parallel_sum(n, [&](std::int64_t b, std::int64_t e) { return chunk::asum(e - b, x + b); }));
}

// Byte-wise work is split from 128 KiB on (the element threshold times four bytes).
constexpr std::int64_t kParallelBytes = kParallelThreshold * 4;

inline void fill_bytes(void* dst, int value, std::size_t bytes) {
  char* d = static_cast<char*>(dst);
  parallel_for(
      static_cast<std::int64_t>(bytes),
      [&](std::int64_t b, std::int64_t e) { std::memset(d + b, value, static_cast<std::size_t>(e - b)); },
      kParallelBytes);
}

// memmove semantics: overlapping ranges are copied on one thread. Copies larger than the
// cache use streaming stores (stream_copy.hpp).
inline void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (d < s + bytes && s < d + bytes) {
    std::memmove(d, s, bytes);
    return;
  }
  const bool streaming = bytes > kStreamingCopyBytes;
  parallel_for(
      static_cast<std::int64_t>(bytes),
      [&](std::int64_t b, std::int64_t e) {
        if (streaming) {
          stream_copy(d + b, s + b, static_cast<std::size_t>(e - b));
        } else {
          std::memcpy(d + b, s + b, static_cast<std::size_t>(e - b));
        }
      },
      kParallelBytes);
}

}  // namespace blobrt_kernels

#endif
