// The CUDA plugin's gemm and gemv (plugin ABI 1.2) through cuBLAS's 64-bit API on the
// plugin's stream, pointer mode host (alpha and beta are the caller's values).
//
// cuBLAS is column-major; Caffe's operands are row-major. A row-major m x n matrix with
// leading dimension ld is the column-major n x m matrix of its transpose, so
//   gemm: C = op(A) op(B) becomes C^T = op(B)^T op(A)^T, i.e. cublas?gemm(trans_b, trans_a,
//         n, m, k, alpha, B, ldb, A, lda, beta, C, n) with Caffe's lda = trans_a ? m : k,
//         ldb = trans_b ? k : n (Caffe's caffe_gpu_gemm does the same);
//   gemv: A (m x n, lda = n) is column-major A^T (n x m), so y = A x is
//         cublas?gemv(T, n, m, A, n) and y = A^T x is cublas?gemv(N, n, m, A, n).
// Both never read C or y when beta is 0, as BLAS. An empty inner dimension never reaches
// them: the core scales by beta itself.
#include <cstdint>

#include "blobrt/plugin_abi.h"
#include "context.hpp"

namespace blobrt_cuda {

namespace {

cublasOperation_t op(bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }

cublasStatus_t blas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                         const float* alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                         const float* beta, float* c, int64_t ldc) {
  return cublasSgemm_v2_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t blas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                         const double* alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                         const double* beta, double* c, int64_t ldc) {
  return cublasDgemm_v2_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t blas_gemv(cublasHandle_t h, cublasOperation_t t, int64_t m, int64_t n, const float* alpha,
                         const float* a, int64_t lda, const float* x, const float* beta, float* y) {
  return cublasSgemv_v2_64(h, t, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
cublasStatus_t blas_gemv(cublasHandle_t h, cublasOperation_t t, int64_t m, int64_t n, const double* alpha,
                         const double* a, int64_t lda, const double* x, const double* beta, double* y) {
  return cublasDgemv_v2_64(h, t, m, n, alpha, a, lda, x, 1, beta, y, 1);
}

template <typename T>
int gemm_t(Context* c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t ao,
           const void* b, int64_t bo, double beta, void* cc, int64_t co, blobrt_error* err) {
  const T alpha_t = static_cast<T>(alpha), beta_t = static_cast<T>(beta);
  ON_DEVICE(c);
  BLAS_CHECK(blas_gemm(c->blas, op(tb), op(ta), n, m, k, &alpha_t, at<T>(b, bo), tb ? k : n, at<T>(a, ao), ta ? m : k,
                       &beta_t, at<T>(cc, co), n),
             blobrt::plugin_kit::by_precision<T>("cublasSgemm_v2_64", "cublasDgemm_v2_64"));
  return BLOBRT_OK;
}

template <typename T>
int gemv_t(Context* c, bool ta, int64_t m, int64_t n, double alpha, const void* a, int64_t ao, const void* x,
           int64_t xo, double beta, void* y, int64_t yo, blobrt_error* err) {
  const T alpha_t = static_cast<T>(alpha), beta_t = static_cast<T>(beta);
  ON_DEVICE(c);
  BLAS_CHECK(blas_gemv(c->blas, ta ? CUBLAS_OP_N : CUBLAS_OP_T, n, m, &alpha_t, at<T>(a, ao), n, at<T>(x, xo), &beta_t,
                       at<T>(y, yo)),
             blobrt::plugin_kit::by_precision<T>("cublasSgemv_v2_64", "cublasDgemv_v2_64"));
  return BLOBRT_OK;
}

}  // namespace

// The core has checked the arguments (plugin_abi.h, blobrt/plugin_kit.hpp): codes are known,
// sizes and offsets not negative, m, n, k and alpha not 0.
int gemm(void* context, int32_t precision, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
         double alpha, const void* a, int64_t a_offset, const void* b, int64_t b_offset, double beta, void* c,
         int64_t c_offset, blobrt_error* err) {
  Context* cx = as_context(context);
  const bool ta = trans_a == BLOBRT_TRANS, tb = trans_b == BLOBRT_TRANS;
  return precision == BLOBRT_FLOAT64
             ? gemm_t<double>(cx, ta, tb, m, n, k, alpha, a, a_offset, b, b_offset, beta, c, c_offset, err)
             : gemm_t<float>(cx, ta, tb, m, n, k, alpha, a, a_offset, b, b_offset, beta, c, c_offset, err);
}

int gemv(void* context, int32_t precision, int32_t trans_a, int64_t m, int64_t n, double alpha, const void* a,
         int64_t a_offset, const void* x, int64_t x_offset, double beta, void* y, int64_t y_offset, blobrt_error* err) {
  Context* cx = as_context(context);
  const bool ta = trans_a == BLOBRT_TRANS;
  return precision == BLOBRT_FLOAT64
             ? gemv_t<double>(cx, ta, m, n, alpha, a, a_offset, x, x_offset, beta, y, y_offset, err)
             : gemv_t<float>(cx, ta, m, n, alpha, a, a_offset, x, x_offset, beta, y, y_offset, err);
}

}  // namespace blobrt_cuda
