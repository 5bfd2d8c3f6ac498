// The OpenCL plugin's gemm and gemv (plugin ABI 1.2) through CLBlast: clblast::Gemm and
// clblast::Gemv with Layout::kRowMajor take Caffe's row-major operands and leading
// dimensions as they are (lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n; gemv's
// lda = n) and offsets in elements, so no operand is copied or transposed. CLBlast refuses
// an empty inner dimension (kInvalidDimension), where BLAS scales C (or y) by beta: that
// case is the element-wise scale (or a fill with 0 when beta is 0, which BLAS never reads).
// Xgemm never reads C when beta is 0; Xgemv does (y is filled with 0 first).
#include <cstdint>
#include <string>

#include "blobrt/plugin_abi.h"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

clblast::Transpose transpose(bool yes) { return yes ? clblast::Transpose::kYes : clblast::Transpose::kNo; }

// C or y = beta * itself, `count` elements (an empty inner dimension).
int scale_by_beta(void* context, int32_t precision, int64_t count, double beta, void* y, int64_t y_offset,
                  blobrt_error* err) {
  if (beta == 1) return BLOBRT_OK;
  if (beta == 0) {
    return elementwise(context, precision, BLOBRT_EW_SET, count, 0, 0, nullptr, 0, nullptr, 0, y, y_offset, err);
  }
  return elementwise(context, precision, BLOBRT_EW_SCALE, count, beta, 0, y, y_offset, nullptr, 0, y, y_offset, err);
}

int check_precision_code(int32_t precision, const char* call, blobrt_error* err) {
  if (precision == BLOBRT_FLOAT32 || precision == BLOBRT_FLOAT64) return BLOBRT_OK;
  return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "%s: precision %d (expected %d or %d)", call,
                     static_cast<int>(precision), BLOBRT_FLOAT32, BLOBRT_FLOAT64);
}

int check_trans(int32_t trans, const char* call, const char* operand, blobrt_error* err) {
  if (trans == BLOBRT_NO_TRANS || trans == BLOBRT_TRANS) return BLOBRT_OK;
  return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "%s: %s %d (expected %d or %d)", call, operand,
                     static_cast<int>(trans), BLOBRT_NO_TRANS, BLOBRT_TRANS);
}

std::string sizes(const char* routine, int64_t m, int64_t n, int64_t k) {
  return std::string(routine) + "(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
         (k >= 0 ? ", k=" + std::to_string(k) : std::string()) + ")";
}

template <typename T>
int gemm_t(Context* c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t ao,
           const void* b, int64_t bo, double beta, void* cc, int64_t co, blobrt_error* err) {
  if (int s = check_precision<T>(c, err)) return s;
  const std::string call = sizes(blobrt::plugin_kit::by_precision<T>("clblast::Gemm<float>", "clblast::Gemm<double>"),
                                 m, n, k);
  return blast_call(c, err, blobrt::plugin_kit::by_precision<T>("clblast::Gemm<float>", "clblast::Gemm<double>"),
                    call.c_str(), [&] {
                      return clblast::Gemm<T>(clblast::Layout::kRowMajor, transpose(ta), transpose(tb), m, n, k,
                                              static_cast<T>(alpha), as_mem(a), ao, ta ? m : k, as_mem(b), bo,
                                              tb ? k : n, static_cast<T>(beta), as_mem(cc), co, n, &c->queue, nullptr);
                    });
}

template <typename T>
int gemv_t(Context* c, bool ta, int64_t m, int64_t n, double alpha, const void* a, int64_t ao, const void* x,
           int64_t xo, double beta, void* y, int64_t yo, blobrt_error* err) {
  if (int s = check_precision<T>(c, err)) return s;
  const std::string call = sizes(blobrt::plugin_kit::by_precision<T>("clblast::Gemv<float>", "clblast::Gemv<double>"),
                                 m, n, -1);
  return blast_call(c, err, blobrt::plugin_kit::by_precision<T>("clblast::Gemv<float>", "clblast::Gemv<double>"),
                    call.c_str(), [&] {
                      return clblast::Gemv<T>(clblast::Layout::kRowMajor, transpose(ta), m, n, static_cast<T>(alpha),
                                              as_mem(a), ao, n, as_mem(x), xo, 1, static_cast<T>(beta), as_mem(y), yo,
                                              1, &c->queue, nullptr);
                    });
}

}  // namespace

int gemm(void* context, int32_t precision, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
         double alpha, const void* a, int64_t a_offset, const void* b, int64_t b_offset, double beta, void* c,
         int64_t c_offset, blobrt_error* err) {
  if (int s = check_precision_code(precision, "gemm", err)) return s;
  if (int s = check_trans(trans_a, "gemm", "trans_a", err)) return s;
  if (int s = check_trans(trans_b, "gemm", "trans_b", err)) return s;
  if (m < 0 || n < 0 || k < 0 || a_offset < 0 || b_offset < 0 || c_offset < 0) {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT,
                       "gemm with m=%lld n=%lld k=%lld, offsets a %lld b %lld c %lld: none may be negative",
                       static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                       static_cast<long long>(a_offset), static_cast<long long>(b_offset),
                       static_cast<long long>(c_offset));
  }
  if (m == 0 || n == 0) return BLOBRT_OK;
  if (k == 0) return scale_by_beta(context, precision, m * n, beta, c, c_offset, err);
  Context* cx = as_context(context);
  const bool ta = trans_a != BLOBRT_NO_TRANS, tb = trans_b != BLOBRT_NO_TRANS;
  return precision == BLOBRT_FLOAT64
             ? gemm_t<double>(cx, ta, tb, m, n, k, alpha, a, a_offset, b, b_offset, beta, c, c_offset, err)
             : gemm_t<float>(cx, ta, tb, m, n, k, alpha, a, a_offset, b, b_offset, beta, c, c_offset, err);
}

int gemv(void* context, int32_t precision, int32_t trans_a, int64_t m, int64_t n, double alpha, const void* a,
         int64_t a_offset, const void* x, int64_t x_offset, double beta, void* y, int64_t y_offset, blobrt_error* err) {
  if (int s = check_precision_code(precision, "gemv", err)) return s;
  if (int s = check_trans(trans_a, "gemv", "trans_a", err)) return s;
  if (m < 0 || n < 0 || a_offset < 0 || x_offset < 0 || y_offset < 0) {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT,
                       "gemv with m=%lld n=%lld, offsets a %lld x %lld y %lld: none may be negative",
                       static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(a_offset),
                       static_cast<long long>(x_offset), static_cast<long long>(y_offset));
  }
  const bool ta = trans_a != BLOBRT_NO_TRANS;
  const int64_t x_count = ta ? m : n, y_count = ta ? n : m;
  if (y_count == 0) return BLOBRT_OK;
  if (x_count == 0) return scale_by_beta(context, precision, y_count, beta, y, y_offset, err);
  // CLBlast's Xgemv computes beta * y even when beta is 0, so a NaN in y would survive
  // where BLAS never reads y: y is filled with 0 first (m or n elements, next to A's m x n).
  if (beta == 0) {
    if (int s = scale_by_beta(context, precision, y_count, 0, y, y_offset, err)) return s;
  }
  Context* cx = as_context(context);
  return precision == BLOBRT_FLOAT64
             ? gemv_t<double>(cx, ta, m, n, alpha, a, a_offset, x, x_offset, beta, y, y_offset, err)
             : gemv_t<float>(cx, ta, m, n, alpha, a, a_offset, x, x_offset, beta, y, y_offset, err);
}

}  // namespace blobrt_opencl
