// gemm and gemv on host memory with Caffe's row-major conventions (plugin_abi.h): what the
// built-in host device and the core's host fallback run where no BLAS is loaded. Rows are
// split across cores; the inner loops run along contiguous rows so they vectorise. A BLAS
// (the BLIS plugin) is many times faster on large matrices: the CPU half of Caffe's math
// runs there when it is installed.
// Header-only, shared by libblobrt and the plugins.
#ifndef BLOBRT_KERNELS_GEMM_HPP
#define BLOBRT_KERNELS_GEMM_HPP

#include <algorithm>
#include <cstdint>

#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

// Rows per split: enough that each thread gets at least ~2^20 multiply-adds.
inline std::int64_t row_threshold(std::int64_t work_per_row) {
  return std::max<std::int64_t>(2, (std::int64_t(1) << 21) / std::max<std::int64_t>(1, work_per_row));
}

// C = alpha * op(A) * op(B) + beta * C; op(A) m x k, op(B) k x n, C m x n;
// lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n. beta == 0 ignores C's old values
// (NaN included), as BLAS does.
template <typename T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          const T* b, T beta, T* c) {
  constexpr std::int64_t kBlock = 256;  // a block of B's rows stays in cache across C's rows
  parallel_for(
      m,
      [&](std::int64_t row_begin, std::int64_t row_end) {
        for (std::int64_t i = row_begin; i < row_end; ++i) {
          T* ci = c + i * n;
          if (beta == T(0)) {
            std::fill(ci, ci + n, T(0));
          } else if (beta != T(1)) {
#pragma omp simd
            for (std::int64_t j = 0; j < n; ++j) ci[j] *= beta;
          }
        }
        if (alpha == T(0) || k == 0) return;
        for (std::int64_t p0 = 0; p0 < k; p0 += kBlock) {
          const std::int64_t p1 = std::min(k, p0 + kBlock);
          for (std::int64_t i = row_begin; i < row_end; ++i) {
            T* ci = c + i * n;
            for (std::int64_t p = p0; p < p1; ++p) {
              const T aip = alpha * (trans_a ? a[p * m + i] : a[i * k + p]);
              if (!trans_b) {
                const T* bp = b + p * n;
#pragma omp simd
                for (std::int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
              } else {
                for (std::int64_t j = 0; j < n; ++j) ci[j] += aip * b[j * k + p];
              }
            }
          }
        }
      },
      row_threshold(n * k));
}

// y = alpha * op(A) * x + beta * y; A m x n (lda = n). Without transposition x has n
// elements and y m; with it, x has m and y n.
template <typename T>
void gemv(bool trans_a, std::int64_t m, std::int64_t n, T alpha, const T* a, const T* x, T beta, T* y) {
  const std::int64_t rows = trans_a ? n : m;
  auto scale_y = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) y[i] = beta == T(0) ? T(0) : beta * y[i];
  };
  if (alpha == T(0) || (trans_a ? m : n) == 0) {  // y = beta * y; A and x are not read (BLAS)
    parallel_for(rows, scale_y);
    return;
  }
  if (!trans_a) {
    parallel_for(
        m,
        [&](std::int64_t begin, std::int64_t end) {
          scale_y(begin, end);
          for (std::int64_t i = begin; i < end; ++i) {
            const T* ai = a + i * n;
            T sum = 0;
#pragma omp simd reduction(+ : sum)
            for (std::int64_t j = 0; j < n; ++j) sum += ai[j] * x[j];
            y[i] += alpha * sum;
          }
        },
        row_threshold(n));
    return;
  }
  // y[j] += alpha * sum_i A[i][j] x[i]: each thread owns a range of y and walks A's rows.
  parallel_for(
      rows,
      [&](std::int64_t begin, std::int64_t end) {
        scale_y(begin, end);
        for (std::int64_t i = 0; i < m; ++i) {
          const T axi = alpha * x[i];
          const T* ai = a + i * n;
#pragma omp simd
          for (std::int64_t j = begin; j < end; ++j) y[j] += axi * ai[j];
        }
      },
      row_threshold(m));
}

}  // namespace blobrt_kernels

#endif
