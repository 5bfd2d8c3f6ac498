// Caffe's element-wise family on host memory (plugin_abi.h, blobrt_elementwise_op): one
// vectorisable loop per operation, the operation chosen once per chunk (never per
// element), chunks split across cores as the level-1 kernels are (parallel.hpp).
// Header-only: the host device, the BLIS plugin, the OpenCL plugin's host path and the
// core's host fallback for devices without the operation all use it.
#ifndef BLOBRT_KERNELS_ELEMENTWISE_HPP
#define BLOBRT_KERNELS_ELEMENTWISE_HPP

#include <cmath>
#include <cstdint>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

namespace serial {

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
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::sqrt(a[i]);
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
      for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(std::signbit(a[i]) ? 1 : 0);
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
  parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    serial::elementwise(op, end - begin, alpha, beta, a ? a + begin : nullptr, b ? b + begin : nullptr, y + begin);
  });
  return true;
}

// Which operands an operation reads: `a`, `b`, and `y` itself (y is always written).
inline bool reads_a(int op) { return op != BLOBRT_EW_SET && op != BLOBRT_EW_ADD_SCALAR; }
inline bool reads_b(int op) { return op >= BLOBRT_EW_ADD && op <= BLOBRT_EW_DIV; }
inline bool reads_y(int op) { return op == BLOBRT_EW_ADD_SCALAR || op == BLOBRT_EW_AXPBY; }

}  // namespace blobrt_kernels

#endif
