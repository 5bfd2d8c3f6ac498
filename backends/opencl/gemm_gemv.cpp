// The OpenCL plugin's gemm and gemv (plugin ABI 1.2) through CLBlast: clblast::Gemm and
// clblast::Gemv with Layout::kRowMajor take Caffe's row-major operands and leading
// dimensions as they are (lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n; gemv's
// lda = n) and offsets in elements, so no operand is copied or transposed. CLBlast refuses
// an empty inner dimension (kInvalidDimension): the core never passes one (it scales C or y
// by beta itself). Xgemm never reads C when beta is 0; Xgemv does (y is filled with 0 first).
#include <cstdint>
#include <string>

#include "blobrt/plugin_abi.h"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

clblast::Transpose transpose(bool yes) { return yes ? clblast::Transpose::kYes : clblast::Transpose::kNo; }

// y = 0, `count` elements: CLBlast's Xgemv reads y even when beta is 0 (below).
int fill_with_zero(void* context, int32_t precision, int64_t count, void* y, int64_t y_offset, blobrt_error* err) {
  return elementwise(context, precision, BLOBRT_EW_SET, count, 0, 0, nullptr, 0, nullptr, 0, y, y_offset, err);
}

std::string sizes(const char* routine, int64_t m, int64_t n, int64_t k) {
  return std::string(routine) + "(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
         (k >= 0 ? ", k=" + std::to_string(k) : std::string()) + ")";
}

template <typename T>
int gemm_t(Context* c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t ao,
           const void* b, int64_t bo, double beta, void* cc, int64_t co, blobrt_error* err) {
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
  const bool ta = trans_a == BLOBRT_TRANS;
  // CLBlast's Xgemv computes beta * y even when beta is 0, so a NaN in y would survive
  // where BLAS never reads y: y is filled with 0 first.
  if (beta == 0) {
    if (int s = fill_with_zero(context, precision, ta ? n : m, y, y_offset, err)) return s;
  }
  Context* cx = as_context(context);
  return precision == BLOBRT_FLOAT64
             ? gemv_t<double>(cx, ta, m, n, alpha, a, a_offset, x, x_offset, beta, y, y_offset, err)
             : gemv_t<float>(cx, ta, m, n, alpha, a, a_offset, x, x_offset, beta, y, y_offset, err);
}

}  // namespace blobrt_opencl
