// The CPU backend on BLIS, on the plugin kit's host-memory device (blobrt/plugin_kit_host.hpp:
// allocation, copies, memset, dot, asum and the element-wise family on blobrt's kernels;
// BLIS 0.9's ?asumv is not vectorised and its ?dotv stays below the streaming limit, the
// raw-BLIS rows of docs/performance-results.md). What is BLIS's here:
//  - axpy and scal: bli_?axpyv, bli_?scalv (64-bit lengths), one contiguous chunk per core
//    for large n, since BLIS runs level-1 routines on one thread.
//  - gemm: bli_?gemm with row strides (Caffe's row-major layout as it is), one call on the
//    calling thread. BLIS's own threads are OpenMP's here (Debian), which busy-wait for
//    each other: on a node whose cores are shared (an MPI rank beside this one) one
//    64x500x784 gemm took 2-6 ms instead of 0.6 (docs/performance.md, "The MLP step"), so
//    the plugin no longer asks BLIS for more than its default one thread; a user who sets
//    BLIS_NUM_THREADS, OMP_NUM_THREADS or a BLIS_*_NT variable gets BLIS's own threading.
//  - gemv: bli_?gemv, which BLIS runs on one thread: large ones split across cores by rows
//    of y (a band of A's rows, or with transposition of its columns; one call per chunk).
#include <blis.h>

#include <algorithm>
#include <string>

#include "blobrt/plugin_kit_host.hpp"

namespace {

namespace kit = blobrt::plugin_kit;
using kit::at;
static_assert(sizeof(dim_t) == 8, "this plugin expects BLIS built with 64-bit dim_t");

// BLIS's typed calls, overloaded so each operation below is written once for both precisions.
void axpyv(dim_t n, float a, float* x, float* y) { bli_saxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
void axpyv(dim_t n, double a, double* x, double* y) { bli_daxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
void scalv(dim_t n, float a, float* x) { bli_sscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
void scalv(dim_t n, double a, double* x) { bli_dscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
void gemm_(trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, float al, float* a, inc_t lda, float* b, inc_t ldb,
           float be, float* c, inc_t ldc) {
  bli_sgemm(ta, tb, m, n, k, &al, a, lda, 1, b, ldb, 1, &be, c, ldc, 1);
}
void gemm_(trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, double al, double* a, inc_t lda, double* b, inc_t ldb,
           double be, double* c, inc_t ldc) {
  bli_dgemm(ta, tb, m, n, k, &al, a, lda, 1, b, ldb, 1, &be, c, ldc, 1);
}
// Unlike gemm's, BLIS's gemv m and n are those of A as stored, before transposition.
void gemv_(trans_t ta, dim_t rows, dim_t cols, float al, float* a, inc_t lda, float* x, float be, float* y) {
  bli_sgemv(ta, BLIS_NO_CONJUGATE, rows, cols, &al, a, lda, 1, x, 1, &be, y, 1);
}
void gemv_(trans_t ta, dim_t rows, dim_t cols, double al, double* a, inc_t lda, double* x, double be, double* y) {
  bli_dgemv(ta, BLIS_NO_CONJUGATE, rows, cols, &al, a, lda, 1, x, 1, &be, y, 1);
}
trans_t trans(int32_t t) { return t == BLOBRT_TRANS ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE; }

struct Blis : kit::HostMemoryDevice {
  static int device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
    if (int status = kit::check_index(err, "blis", index, 1)) return status;
    kit::set_text(out->name, "host CPU via BLIS %s", bli_info_get_version_str());
    kit::set_text(out->details,
                  "BLIS %s, %ld online CPUs, %d-bit dimensions; level-1 calls split across cores by blobrt",
                  bli_info_get_version_str(), sysconf(_SC_NPROCESSORS_ONLN),
                  static_cast<int>(bli_info_get_int_type_size()));
    kit::fill_host_properties(out);
    return BLOBRT_OK;
  }
  static int open_device(int32_t index, void** context, blobrt_error* err) {
    if (int status = kit::check_index(err, "blis", index, 1)) return status;
    *context = nullptr;
    return BLOBRT_OK;
  }

  template <typename T>
  static int axpy(void*, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error*) {
    T *xs = at<T>(x, xo), *ys = at<T>(y, yo);
    blobrt_kernels::parallel_for(n, [&](int64_t b, int64_t e) { axpyv(e - b, alpha, xs + b, ys + b); });
    return BLOBRT_OK;
  }
  template <typename T>
  static int scal(void*, int64_t n, T alpha, void* x, int64_t xo, blobrt_error*) {
    T* xs = at<T>(x, xo);
    blobrt_kernels::parallel_for(n, [&](int64_t b, int64_t e) { scalv(e - b, alpha, xs + b); });
    return BLOBRT_OK;
  }
  static constexpr auto saxpy = axpy<float>, daxpy = axpy<double>;
  static constexpr auto sscal = scal<float>, dscal = scal<double>;

  template <typename T>
  static void gemm_typed(int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
                         int64_t ao, const void* b, int64_t bo, double beta, void* c, int64_t co) {
    const bool at_ = ta == BLOBRT_TRANS, bt = tb == BLOBRT_TRANS;
    const int64_t lda = at_ ? m : k, ldb = bt ? k : n;
    T *as = at<T>(a, ao), *bs = at<T>(b, bo), *cs = at<T>(c, co);
    // One call on the calling thread: BLIS's own threads only where the user asked for them
    // (see the top of the file). Splitting one gemm into concurrent bli_?gemm calls from
    // blobrt's team was tried: valgrind then finds Debian's OpenMP BLIS reading memory it
    // had freed, so BLIS is not called from two threads at once here.
    gemm_(trans(ta), trans(tb), m, n, k, T(alpha), as, lda, bs, ldb, T(beta), cs, n);
  }

  static int gemm(void*, int32_t precision, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, double alpha,
                  const void* a, int64_t ao, const void* b, int64_t bo, double beta, void* c, int64_t co,
                  blobrt_error*) {
    (precision == BLOBRT_FLOAT64 ? gemm_typed<double> : gemm_typed<float>)(ta, tb, m, n, k, alpha, a, ao, b, bo,
                                                                         beta, c, co);
    return BLOBRT_OK;
  }

  template <typename T>
  static void gemv_typed(int32_t ta, int64_t m, int64_t n, double alpha, const void* a, int64_t ao, const void* x,
                         int64_t xo, double beta, void* y, int64_t yo) {
    const bool t = ta == BLOBRT_TRANS;
    T *as = at<T>(a, ao), *xs = at<T>(x, xo), *ys = at<T>(y, yo);
    const int64_t rows = t ? n : m, cols = t ? m : n;
    // Each chunk reads ~threshold/4 rows of A: at least ~2^17 elements.
    const int64_t threshold = std::max<int64_t>(64, (int64_t(1) << 19) / std::max<int64_t>(1, cols));
    blobrt_kernels::parallel_for(
        rows,
        [&](int64_t b, int64_t e) {
          if (t) gemv_(BLIS_TRANSPOSE, m, e - b, T(alpha), as + b, n, xs, T(beta), ys + b);
          else gemv_(BLIS_NO_TRANSPOSE, e - b, n, T(alpha), as + b * n, n, xs, T(beta), ys + b);
        },
        threshold);
  }
  static int gemv(void*, int32_t precision, int32_t ta, int64_t m, int64_t n, double alpha, const void* a,
                  int64_t ao, const void* x, int64_t xo, double beta, void* y, int64_t yo, blobrt_error*) {
    (precision == BLOBRT_FLOAT64 ? gemv_typed<double> : gemv_typed<float>)(ta, m, n, alpha, a, ao, x, xo, beta, y,
                                                                         yo);
    return BLOBRT_OK;
  }
};

}  // namespace

BLOBRT_PLUGIN_DEFINE(Blis, "blis", std::string("BLIS ") + bli_info_get_version_str())
