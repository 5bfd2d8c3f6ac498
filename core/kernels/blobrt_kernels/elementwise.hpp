// Caffe's element-wise family on host memory (blobrt/elementwise_operations.h lists the
// codes): one vectorised loop per operation, ew_<name>, the operation chosen once per chunk
// (never per element),
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

// The host kernel of each code (blobrt/elementwise_operations.h), one function per code
// named ew_<name>: y[0..n) = f(a, b, y). `a`, `b` may alias `y` exactly (Caffe's in-place
// calls), so no __restrict here. An operand the code does not read is NULL.
template <typename T>
inline void ew_set(std::int64_t n, T alpha, T, const T*, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = alpha;
}
template <typename T>
inline void ew_add_scalar(std::int64_t n, T alpha, T, const T*, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha;
}
template <typename T>
inline void ew_scale(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = alpha * a[i];
}
template <typename T>
inline void ew_axpby(std::int64_t n, T alpha, T beta, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = alpha * a[i] + beta * y[i];
}
template <typename T>
inline void ew_add(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
template <typename T>
inline void ew_sub(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
}
template <typename T>
inline void ew_mul(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
template <typename T>
inline void ew_div(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
}
template <typename T>
inline void ew_powx(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::pow(a[i], alpha);
}
template <typename T>
inline void ew_sqr(std::int64_t n, T, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
}
template <typename T>
inline void ew_sqrt(std::int64_t n, T, T, const T* a, const T*, T* y) {
  sqrt_loop(n, a, y);
}
template <typename T>
inline void ew_exp(std::int64_t n, T, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::exp(a[i]);
}
template <typename T>
inline void ew_log(std::int64_t n, T, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::log(a[i]);
}
template <typename T>
inline void ew_abs(std::int64_t n, T, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::fabs(a[i]);
}
template <typename T>
inline void ew_sign(std::int64_t n, T, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((T(0) < a[i]) - (a[i] < T(0)));
}
template <typename T>
inline void ew_sgnbit(std::int64_t n, T, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(sign_bit(a[i]));
}

// The neuron layers' activations (ABI 1.5), as Caffe's GPU kernels compute them: ReLU's
// `a > 0 ? a : a * negative_slope` (its CPU code's max + slope * min differs in the sign
// of a zero), sigmoid through tanh in double as Caffe's sigmoid() (its 0.5 is a double, for
// float too); the backward codes take the data
// the layer's Backward reads (a) and the top's diff (b).
template <typename T>
inline void ew_relu(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > T(0) ? a[i] : a[i] * alpha;
}
template <typename T>
inline void ew_relu_backward(std::int64_t n, T alpha, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = b[i] * (T(a[i] > T(0)) + T(a[i] <= T(0)) * alpha);
}
template <typename T>
inline void ew_sigmoid(std::int64_t n, T, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(0.5 * std::tanh(0.5 * static_cast<double>(a[i])) + 0.5);
}
template <typename T>
inline void ew_sigmoid_backward(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = b[i] * a[i] * (T(1) - a[i]);
}
template <typename T>
inline void ew_tanh(std::int64_t n, T, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::tanh(a[i]);
}
template <typename T>
inline void ew_tanh_backward(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = b[i] * (T(1) - a[i] * a[i]);
}

// ABI 1.7: ELU, BNLL, Threshold and Clip as their .cu kernels compute them. BNLL's 1. is a
// double in Caffe's kernels (the sum and its log in double, for float too); ELU's backward
// reads the top (a); Clip is CUDA's fminf/fmaxf.
template <typename T>
inline void ew_elu(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > T(0) ? a[i] : alpha * (std::exp(a[i]) - T(1));
}
template <typename T>
inline void ew_elu_backward(std::int64_t n, T alpha, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > T(0) ? b[i] : b[i] * (a[i] + alpha);
}
template <typename T>
inline void ew_bnll(std::int64_t n, T, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<T>(a[i] > T(0) ? a[i] + std::log(1. + std::exp(-a[i])) : std::log(1. + std::exp(a[i])));
  }
}
template <typename T>
inline void ew_bnll_backward(std::int64_t n, T, T, const T* a, const T* b, T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T e = std::exp(std::fmin(a[i], T(50)));
    y[i] = static_cast<T>(b[i] * e / (e + 1.));
  }
}
template <typename T>
inline void ew_threshold(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > alpha ? T(1) : T(0);
}
template <typename T>
inline void ew_clip(std::int64_t n, T alpha, T beta, const T* a, const T*, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::fmax(alpha, std::fmin(a[i], beta));
}
template <typename T>
inline void ew_clip_backward(std::int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = b[i] * T(a[i] >= alpha && a[i] <= beta);
}

// Eltwise MAX's steps, as MaxForward and MaxBackward compute them (the mask in T).
template <typename T>
inline void ew_max_step(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > b[i] ? a[i] : b[i];
}
template <typename T>
inline void ew_argmax_step(std::int64_t n, T alpha, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > b[i] ? y[i] : alpha;
}
template <typename T>
inline void ew_mask_select(std::int64_t n, T alpha, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] == alpha ? T(0) + b[i] : T(0);
}
// PReLU's selection: b where a > 0, else y unchanged.
template <typename T>
inline void ew_positive_select(std::int64_t n, T, T, const T* a, const T* b, T* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] > T(0) ? b[i] : y[i];
}

// SigmoidCrossEntropyLoss's forward kernel: the log-likelihood of target b under sigmoid(a),
// in the .cu's form (log(1 + exp(-|a|)), never an overflowing exp), evaluated as it is in T.
template <typename T>
inline void ew_sigmoid_cross_entropy(std::int64_t n, T, T, const T* a, const T* b, T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T x = a[i], positive = T(x >= T(0));
    y[i] = x * (b[i] - positive) - std::log(T(1) + std::exp(x - T(2) * x * positive));
  }
}
// The ignore label's mask: y cleared where label a, toward zero, is alpha (Caffe's
// static_cast<int>(label) == ignore_label, for every label an int holds).
template <typename T>
inline void ew_zero_where_label(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::trunc(a[i]) == alpha ? T(0) : y[i];
}
// Fast R-CNN's SmoothL1Forward and SmoothL1Backward kernels (alpha = sigma^2), as they
// compute in T: the bound 1 / sigma^2 and the quadratic and linear pieces in double (the
// kernels' 1.0 and 0.5 are double constants), the derivative's product in T.
template <typename T>
inline void ew_smooth_l1(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
  const double sigma2 = alpha, bound = 1.0 / sigma2, half = 0.5 / sigma2;
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = a[i], m = std::fabs(v);
    y[i] = m < bound ? static_cast<T>(0.5 * v * v * sigma2) : static_cast<T>(m - half);
  }
}
template <typename T>
inline void ew_smooth_l1_backward(std::int64_t n, T alpha, T, const T* a, const T*, T* y) {
  const double bound = 1.0 / static_cast<double>(alpha);
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = a[i];
    y[i] = std::fabs(v) < bound ? alpha * v : static_cast<T>((T(0) < v) - (v < T(0)));
  }
}

// y[0..n) = f(a, b) for one operation, chosen once (never per element): the list's
// ew_<name>. Returns false for an unknown operation code. A list entry without its
// ew_<name> does not compile: every code has a host kernel, which the core runs for a
// device without one.
template <typename T>
bool elementwise(int op, std::int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  switch (op) {
#define BLOBRT_EW_HOST_CASE_(CODE, Cxx, name, ...) \
  case BLOBRT_EW_##CODE:                           \
    ew_##name<T>(n, alpha, beta, a, b, y);         \
    return true;
    BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_HOST_CASE_)
#undef BLOBRT_EW_HOST_CASE_
    default:
      return false;
  }
}

}  // namespace serial

inline bool is_elementwise_op(int op) { return op >= 0 && op < BLOBRT_EW_OP_COUNT; }

// What the list (blobrt/elementwise_operations.h) says of a code: its name as errors and
// logs say it ("sqr"; "unknown" for a code not in the list) here, the operands it reads
// (`a`, `b`, and `y` itself; y is always written) and whether it is heavy (a libm call per
// element) as the bit masks below.
inline const char* elementwise_op_name(int op) {
  static constexpr const char* names[] = {
#define BLOBRT_EW_NAME_(CODE, Cxx, name, ...) #name,
      BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_NAME_)
#undef BLOBRT_EW_NAME_
  };
  static_assert(sizeof names / sizeof names[0] == BLOBRT_EW_OP_COUNT, "a name for every operation code");
  return is_elementwise_op(op) ? names[op] : "unknown";
}
// The table is indexed by code, so the list must give its codes in numeric order.
namespace detail {
#define BLOBRT_EW_NUMBER_(CODE, Cxx, name, number, ...) number,
constexpr int kEwNumbers[] = {BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_NUMBER_)};
#undef BLOBRT_EW_NUMBER_
constexpr bool ew_codes_in_order() {
  for (int i = 0; i < BLOBRT_EW_OP_COUNT; ++i) {
    if (kEwNumbers[i] != i) return false;
  }
  return true;
}
static_assert(ew_codes_in_order(), "blobrt/elementwise_operations.h lists its codes in numeric order");
}  // namespace detail
// The flags as bit masks by code, so that each predicate is a shift on the path of every
// call (the argument checks ask them): no table load.
namespace detail {
#define BLOBRT_EW_A_BIT_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, ...) | (std::uint64_t{A} << (number))
#define BLOBRT_EW_B_BIT_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, ...) | (std::uint64_t{B} << (number))
#define BLOBRT_EW_Y_BIT_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, ...) | (std::uint64_t{Y} << (number))
#define BLOBRT_EW_HEAVY_BIT_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, ...) | (std::uint64_t{HEAVY} << (number))
constexpr std::uint64_t kEwReadsA = 0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_A_BIT_);
constexpr std::uint64_t kEwReadsB = 0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_B_BIT_);
constexpr std::uint64_t kEwReadsY = 0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_Y_BIT_);
constexpr std::uint64_t kEwHeavy = 0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_HEAVY_BIT_);
#undef BLOBRT_EW_A_BIT_
#undef BLOBRT_EW_B_BIT_
#undef BLOBRT_EW_Y_BIT_
#undef BLOBRT_EW_HEAVY_BIT_
inline bool ew_bit(std::uint64_t mask, int op) {
  return static_cast<unsigned>(op) < static_cast<unsigned>(BLOBRT_EW_OP_COUNT) && ((mask >> op) & 1);
}
}  // namespace detail
inline bool reads_a(int op) { return detail::ew_bit(detail::kEwReadsA, op); }
inline bool reads_b(int op) { return detail::ew_bit(detail::kEwReadsB, op); }
inline bool reads_y(int op) { return detail::ew_bit(detail::kEwReadsY, op); }
inline bool is_heavy(int op) { return detail::ew_bit(detail::kEwHeavy, op); }

// The whole vector, split across cores. Returns false (doing nothing) for an unknown op.
template <typename T>
bool elementwise(int op, std::int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  if (!is_elementwise_op(op)) return false;
  // The heavy ones (pow, exp, log, tanh, sigmoid: glibc's scalar calls, tens of cycles an element,
  // compute-bound, below the memory bus) are worth sharing from a smaller n.
  const bool transcendental = is_heavy(op);
  parallel_for(
      n,
      [&](std::int64_t begin, std::int64_t end) {
        serial::elementwise(op, end - begin, alpha, beta, a ? a + begin : nullptr, b ? b + begin : nullptr,
                            y + begin);
      },
      transcendental ? kParallelThreshold / 16 : kParallelThreshold);
  return true;
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
