// Caffe's element-wise family on host memory (plugin_abi.h, blobrt_elementwise_op): one
// vectorised loop per operation, the operation chosen once per chunk (never per element),
// chunks split across cores as the level-1 kernels are (parallel.hpp). Every operation but
// powx, exp and log runs at memory bandwidth on large vectors; those three call glibc's
// scalar pow/exp/log per element and are compute-bound (docs/performance.md).
// Header-only: the host device, the BLIS plugin, the OpenCL plugin's host path and the
// core's host fallback for devices without the operation all use it.
#ifndef BLOBRT_KERNELS_ELEMENTWISE_HPP
#define BLOBRT_KERNELS_ELEMENTWISE_HPP

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

namespace serial {

// std::signbit as the top bit of the representation: a loop of these vectorises (a loop
// of std::signbit calls does not).
inline std::uint32_t sign_bit(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits >> 31;
}
inline std::uint64_t sign_bit(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits >> 63;
}

// IEEE square roots, vectorised: std::sqrt may set errno (for a negative argument), which
// keeps the compiler from vectorising a loop of them unless built with -fno-math-errno.
inline void sqrt_loop(std::int64_t n, const float* a, float* y) {
  std::int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_sqrt_ps(_mm_loadu_ps(a + i)));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(a[i]);
}
inline void sqrt_loop(std::int64_t n, const double* a, double* y) {
  std::int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(y + i, _mm_sqrt_pd(_mm_loadu_pd(a + i)));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(a[i]);
}

// y[0..n) = f(a, b) for one operation; `a`, `b` may alias `y` exactly (Caffe's in-place
// calls), so no __restrict here. Returns false for an unknown operation code.
template <typename T>
bool elementwise(int op, std::int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  switch (op) {
    case BLOBRT_EW_SET:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = alpha;
      return true;
    case BLOBRT_EW_ADD_SCALAR:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] += alpha;
      return true;
    case BLOBRT_EW_SCALE:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = alpha * a[i];
      return true;
    case BLOBRT_EW_AXPBY:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = alpha * a[i] + beta * y[i];
      return true;
    case BLOBRT_EW_ADD:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
      return true;
    case BLOBRT_EW_SUB:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
      return true;
    case BLOBRT_EW_MUL:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
      return true;
    case BLOBRT_EW_DIV:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
      return true;
    case BLOBRT_EW_POWX:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::pow(a[i], alpha);
      return true;
    case BLOBRT_EW_SQR:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
      return true;
    case BLOBRT_EW_SQRT:
      sqrt_loop(n, a, y);
      return true;
    case BLOBRT_EW_EXP:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::exp(a[i]);
      return true;
    case BLOBRT_EW_LOG:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::log(a[i]);
      return true;
    case BLOBRT_EW_ABS:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::fabs(a[i]);
      return true;
    case BLOBRT_EW_SIGN:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((T(0) < a[i]) - (a[i] < T(0)));
      return true;
    case BLOBRT_EW_SGNBIT:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(sign_bit(a[i]));
      return true;
    default:
      return false;
  }
}

}  // namespace serial

inline bool is_elementwise_op(int op) { return op >= 0 && op < BLOBRT_EW_OP_COUNT; }

// The whole vector, split across cores. Returns false (doing nothing) for an unknown op.
template <typename T>
bool elementwise(int op, std::int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  if (!is_elementwise_op(op)) return false;
  // pow, exp and log cost tens of cycles an element (glibc's scalar calls: compute-bound,
  // below the memory bus), so they are worth sharing from a smaller n.
  const bool transcendental = op == BLOBRT_EW_POWX || op == BLOBRT_EW_EXP || op == BLOBRT_EW_LOG;
  parallel_for(
      n,
      [&](std::int64_t begin, std::int64_t end) {
        serial::elementwise(op, end - begin, alpha, beta, a ? a + begin : nullptr, b ? b + begin : nullptr,
                            y + begin);
      },
      transcendental ? kParallelThreshold / 16 : kParallelThreshold);
  return true;
}

// Which operands an operation reads: `a`, `b`, and `y` itself (y is always written).
inline bool reads_a(int op) { return op != BLOBRT_EW_SET && op != BLOBRT_EW_ADD_SCALAR; }
inline bool reads_b(int op) { return op >= BLOBRT_EW_ADD && op <= BLOBRT_EW_DIV; }
inline bool reads_y(int op) { return op == BLOBRT_EW_ADD_SCALAR || op == BLOBRT_EW_AXPBY; }

// The name of an element-wise operation code, as errors and logs say it ("sqr").
inline const char* elementwise_op_name(int op) {
  static const char* const names[] = {"set", "add_scalar", "scale", "axpby", "add", "sub", "mul", "div",
                                      "powx", "sqr", "sqrt", "exp", "log", "abs", "sign", "sgnbit"};
  static_assert(sizeof names / sizeof names[0] == BLOBRT_EW_OP_COUNT, "a name for every operation code");
  return is_elementwise_op(op) ? names[op] : "unknown";
}

// The element-wise family as one of Caffe's math operations (math_operation.hpp).
template <>
struct MathSemantics<MathOp::elementwise> {
  using Args = MathArgs<MathOp::elementwise>;
  static std::array<Operand, 3> operands(const Args& e) {
    return {{{"a", e.a, e.a_offset, reads_a(e.op) ? e.n : 0, true, false},
             {"b", e.b, e.b_offset, reads_b(e.op) ? e.n : 0, true, false},
             {"y", e.y, e.y_offset, e.n, reads_y(e.op), true}}};
  }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& e, T* const* p) {
    return elementwise<T>(e.op, e.n, static_cast<T>(e.alpha), static_cast<T>(e.beta), p[0], p[1], p[2]);
  }
  static void routine(std::ostream& s, const Args& e) {
    s << "element-wise " << elementwise_op_name(e.op) << (e.precision == BLOBRT_FLOAT64 ? " (double)" : " (float)");
  }
};

}  // namespace blobrt_kernels

#endif
