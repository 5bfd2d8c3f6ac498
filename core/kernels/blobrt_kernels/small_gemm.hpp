// gemm for problems too small for a BLAS library's set-up to pay: Caffe's bias terms (k = 1,
// an outer product per image: conv1's 20x576x1, ip1's 64x500x1) and per-image softmax
// (10x1x1) call gemm hundreds of times a step, and BLIS spends 2.5-6 us on each whatever its
// size (object set-up, packing), where these loops take 0.04-2.4 us (docs/performance.md,
// "Caffe's own training stack"). Row-major, Caffe's conventions: op(A) m x k, op(B) k x n,
// lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n; beta == 0 ignores C's old values,
// alpha == 0 reads neither A nor B, as BLAS does.
// Header-only: blobrt_kernels::gemm (the host device) and the plugin kit's HostBlasDevice
// (the BLIS plugin) take this path for such problems.
#ifndef BLOBRT_KERNELS_SMALL_GEMM_HPP
#define BLOBRT_KERNELS_SMALL_GEMM_HPP

#include <cstdint>

#include "blobrt_kernels/level1.hpp"  // BLOBRT_CLONES

namespace blobrt_kernels {

// Where these loops beat a BLAS call (measured against BLIS 0.9 skx, one thread): any
// outer product up to 2^20 elements of C, and up to 2^15 multiply-adds otherwise.
inline bool is_small_gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  return (k == 1 && m * n <= (std::int64_t(1) << 20)) || m * n * k <= (std::int64_t(1) << 15);
}

namespace serial {

template <typename T>
void small_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, const T* b,
                T beta, T* c) {
  const std::int64_t lda = ta ? m : k, ldb = tb ? k : n;
  for (std::int64_t i = 0; i < m; ++i) {
    T* ci = c + i * n;
    if (beta == T(0)) {
      for (std::int64_t j = 0; j < n; ++j) ci[j] = T(0);
    } else if (beta != T(1)) {
      for (std::int64_t j = 0; j < n; ++j) ci[j] *= beta;
    }
    if (alpha == T(0)) continue;  // as BLAS: A and B are not read (a NaN there changes nothing)
    if (!tb) {  // rows of B are contiguous: C's row accumulates alpha A(i,p) B(p,:)
      for (std::int64_t p = 0; p < k; ++p) {
        const T aip = alpha * (ta ? a[p * lda + i] : a[i * lda + p]);
        const T* bp = b + p * ldb;
#pragma omp simd
        for (std::int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      }
    } else {  // B stored n x k: each C(i,j) is a dot product along B's row j
      for (std::int64_t j = 0; j < n; ++j) {
        const T* bj = b + j * ldb;
        T sum = T(0);
        if (!ta) {
          const T* ai = a + i * lda;
#pragma omp simd reduction(+ : sum)
          for (std::int64_t p = 0; p < k; ++p) sum += ai[p] * bj[p];
        } else {
          for (std::int64_t p = 0; p < k; ++p) sum += a[p * lda + i] * bj[p];
        }
        ci[j] += alpha * sum;
      }
    }
  }
}

}  // namespace serial

namespace chunk {
BLOBRT_CLONES static void small_gemm_f(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                                       const float* a, const float* b, float beta, float* c) {
  serial::small_gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
}
BLOBRT_CLONES static void small_gemm_d(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                                       double alpha, const double* a, const double* b, double beta, double* c) {
  serial::small_gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
}
}  // namespace chunk

inline void small_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                       const float* b, float beta, float* c) {
  chunk::small_gemm_f(ta, tb, m, n, k, alpha, a, b, beta, c);
}
inline void small_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                       const double* a, const double* b, double beta, double* c) {
  chunk::small_gemm_d(ta, tb, m, n, k, alpha, a, b, beta, c);
}

}  // namespace blobrt_kernels

#endif
