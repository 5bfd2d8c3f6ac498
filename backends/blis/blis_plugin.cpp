// The CPU backend on BLIS. Device memory is host memory (64-byte aligned), so the core
// never copies between the host mirror and this device. axpy and scal go to BLIS's
// typed vector API (bli_?axpyv, bli_?scalv: 64-bit lengths in this build), one contiguous
// chunk per core for large n: BLIS runs level-1 routines on one thread, which cannot
// saturate the memory bus. asum and dot do not: BLIS 0.9's ?asumv is not vectorised and
// its ?dotv stays below the streaming limit, where ours reach it (the raw-BLIS rows of
// docs/performance-results.md), so our kernels take them over. memset and copies use the
// same chunking.
//
// ABI 1.2: gemm goes to bli_?gemm with row strides (Caffe's row-major layout as it is,
// 64-bit dimensions), on BLIS's own threads: when neither BLIS_NUM_THREADS,
// OMP_NUM_THREADS nor a BLIS_*_NT variable sets them, the plugin gives BLIS as many as
// blobrt's team has (BLOBRT_NUM_THREADS, else the CPUs this process may use divided by the
// MPI ranks on the node) instead of BLIS's default of one. gemv goes to bli_?gemv, which
// BLIS runs on one thread: large ones are split across cores by rows of y (one bli_?gemv
// per chunk), as the level-1 calls are. The element-wise family runs the shared kernels
// (blobrt_kernels/elementwise.hpp): BLIS has no vector exp, log, div or sign.
#include <blis.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/elementwise.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"
#include "plugin_kit.hpp"

namespace {

namespace kit = blobrt::plugin_kit;

static_assert(sizeof(dim_t) == 8, "this plugin expects BLIS built with 64-bit dim_t");

template <typename T>
T* at(void* buffer, int64_t offset) {
  return static_cast<T*>(buffer) + offset;
}
template <typename T>
T* at(const void* buffer, int64_t offset) {
  return const_cast<T*>(static_cast<const T*>(buffer)) + offset;
}

int device_count(int32_t* count, blobrt_error*) {
  *count = 1;
  return BLOBRT_OK;
}

int device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
  if (int status = kit::check_index(err, "blis", index, 1)) return status;
  kit::set_text(out->name, "host CPU via BLIS %s", bli_info_get_version_str());
  kit::set_text(out->details,
                "BLIS %s, %ld online CPUs, %d-bit dimensions; level-1 calls split across cores by blobrt",
                bli_info_get_version_str(), sysconf(_SC_NPROCESSORS_ONLN),
                static_cast<int>(bli_info_get_int_type_size()));
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  out->memory_bytes = pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * page_size : 0;
  out->kind = BLOBRT_DEVICE_KIND_CPU;
  out->host_memory = 1;
  out->supports_fp64 = 1;
  out->has_pinned_host = 0;
  return BLOBRT_OK;
}

// BLIS's threads for gemm, set once (see the top of this file). BLIS reads its variables
// itself with plain getenv; the kit's getenv decides only whether one was given.
void configure_blis_threads() {
  static const bool done = [] {
    for (const char* name : {"BLIS_NUM_THREADS", "OMP_NUM_THREADS", "BLIS_JC_NT", "BLIS_PC_NT", "BLIS_IC_NT",
                             "BLIS_JR_NT", "BLIS_IR_NT"}) {
      if (!kit::getenv(name).empty()) return true;
    }
    if (bli_thread_get_num_threads() < 1) bli_thread_set_num_threads(blobrt_kernels::team_size());
    return true;
  }();
  (void)done;
}

int open_device(int32_t index, void** context, blobrt_error* err) {
  if (int status = kit::check_index(err, "blis", index, 1)) return status;
  configure_blis_threads();
  *context = nullptr;
  return BLOBRT_OK;
}

void close_device(void*) {}

int allocate(void*, size_t bytes, void** handle, blobrt_error* err) {
  *handle = blobrt_kernels::allocate_host(bytes, 64);
  if (!*handle) {
    return blobrt_fail(err, BLOBRT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  }
  return BLOBRT_OK;
}

void release(void*, void* handle) { std::free(handle); }

int copy_to_device(void*, const void* host, void* dst, size_t dst_offset, size_t bytes, blobrt_error*) {
  blobrt_kernels::copy_bytes(at<char>(dst, dst_offset), host, bytes);
  return BLOBRT_OK;
}

int copy_to_host(void*, const void* src, size_t src_offset, void* host, size_t bytes, blobrt_error*) {
  blobrt_kernels::copy_bytes(host, at<char>(src, src_offset), bytes);
  return BLOBRT_OK;
}

int copy_device(void*, const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes,
                blobrt_error*) {
  blobrt_kernels::copy_bytes(at<char>(dst, dst_offset), at<char>(src, src_offset), bytes);
  return BLOBRT_OK;
}

int memset_(void*, void* dst, size_t offset, int32_t value, size_t bytes, blobrt_error*) {
  blobrt_kernels::fill_bytes(at<char>(dst, offset), value, bytes);
  return BLOBRT_OK;
}

// BLIS's typed calls, overloaded so the chunked wrappers below are written once.
void blis_axpy(dim_t n, float a, float* x, float* y) { bli_saxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
void blis_axpy(dim_t n, double a, double* x, double* y) { bli_daxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
void blis_scal(dim_t n, float a, float* x) { bli_sscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
void blis_scal(dim_t n, double a, double* x) { bli_dscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }

template <typename T>
int axpy(void*, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error*) {
  T* xs = at<T>(x, xo);
  T* ys = at<T>(y, yo);
  blobrt_kernels::parallel_for(n, [&](int64_t b, int64_t e) { blis_axpy(e - b, alpha, xs + b, ys + b); });
  return BLOBRT_OK;
}
template <typename T>
int dot(void*, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error*) {
  *r = blobrt_kernels::dot(n, at<T>(x, xo), at<T>(y, yo));
  return BLOBRT_OK;
}
template <typename T>
int asum(void*, int64_t n, const void* x, int64_t xo, T* r, blobrt_error*) {
  *r = blobrt_kernels::asum(n, at<T>(x, xo));
  return BLOBRT_OK;
}
template <typename T>
int scal(void*, int64_t n, T alpha, void* x, int64_t xo, blobrt_error*) {
  T* xs = at<T>(x, xo);
  blobrt_kernels::parallel_for(n, [&](int64_t b, int64_t e) { blis_scal(e - b, alpha, xs + b); });
  return BLOBRT_OK;
}

// gemm: Caffe's row-major operands as BLIS sees them, with row strides (lda = trans_a ? m
// : k and so on, plugin_abi.h); BLIS's m, n, k are those of op(A) and op(B).
void blis_gemm(trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, float alpha, float* a, inc_t lda, float* b,
               inc_t ldb, float beta, float* c) {
  bli_sgemm(ta, tb, m, n, k, &alpha, a, lda, 1, b, ldb, 1, &beta, c, n, 1);
}
void blis_gemm(trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, double alpha, double* a, inc_t lda, double* b,
               inc_t ldb, double beta, double* c) {
  bli_dgemm(ta, tb, m, n, k, &alpha, a, lda, 1, b, ldb, 1, &beta, c, n, 1);
}
// gemv: unlike gemm's, BLIS's gemv m and n are those of A as stored (rows x cols, row
// stride lda), before transposition.
void blis_gemv(trans_t ta, dim_t rows, dim_t cols, float alpha, float* a, inc_t lda, float* x, float beta, float* y) {
  bli_sgemv(ta, BLIS_NO_CONJUGATE, rows, cols, &alpha, a, lda, 1, x, 1, &beta, y, 1);
}
void blis_gemv(trans_t ta, dim_t rows, dim_t cols, double alpha, double* a, inc_t lda, double* x, double beta,
               double* y) {
  bli_dgemv(ta, BLIS_NO_CONJUGATE, rows, cols, &alpha, a, lda, 1, x, 1, &beta, y, 1);
}

trans_t blis_trans(int32_t t) { return t == BLOBRT_TRANS ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE; }

// The core has checked the arguments (sizes, offsets, precision) and kept k = 0 and
// alpha = 0 for itself.
template <typename T>
int gemm_typed(int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t ao,
               const void* b, int64_t bo, double beta, void* c, int64_t co) {
  configure_blis_threads();
  blis_gemm(blis_trans(ta), blis_trans(tb), m, n, k, static_cast<T>(alpha), at<T>(a, ao), ta == BLOBRT_TRANS ? m : k,
            at<T>(b, bo), tb == BLOBRT_TRANS ? k : n, static_cast<T>(beta), at<T>(c, co));
  return BLOBRT_OK;
}

int gemm(void*, int32_t precision, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, double alpha,
         const void* a, int64_t ao, const void* b, int64_t bo, double beta, void* c, int64_t co, blobrt_error*) {
  return precision == BLOBRT_FLOAT64 ? gemm_typed<double>(ta, tb, m, n, k, alpha, a, ao, b, bo, beta, c, co)
                                     : gemm_typed<float>(ta, tb, m, n, k, alpha, a, ao, b, bo, beta, c, co);
}

// y (rows of op(A)) is cut into chunks, one bli_?gemv each: without transposition a chunk
// is a band of A's rows; with it, a band of A's columns (the same row stride).
template <typename T>
int gemv_typed(int32_t ta, int64_t m, int64_t n, double alpha, const void* a, int64_t ao, const void* x, int64_t xo,
               double beta, void* y, int64_t yo) {
  const bool trans = ta == BLOBRT_TRANS;
  const int64_t rows = trans ? n : m, cols = trans ? m : n;
  T* as = at<T>(a, ao);
  T* xs = at<T>(x, xo);
  T* ys = at<T>(y, yo);
  const T al = static_cast<T>(alpha), be = static_cast<T>(beta);
  // Each chunk reads ~threshold/4 rows of A: at least ~2^17 elements.
  const int64_t threshold = std::max<int64_t>(64, (int64_t(1) << 19) / std::max<int64_t>(1, cols));
  blobrt_kernels::parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        if (trans) {  // columns [begin, end) of A, all m rows
          blis_gemv(BLIS_TRANSPOSE, m, end - begin, al, as + begin, n, xs, be, ys + begin);
        } else {      // rows [begin, end) of A
          blis_gemv(BLIS_NO_TRANSPOSE, end - begin, n, al, as + begin * n, n, xs, be, ys + begin);
        }
      },
      threshold);
  return BLOBRT_OK;
}

int gemv(void*, int32_t precision, int32_t ta, int64_t m, int64_t n, double alpha, const void* a, int64_t ao,
         const void* x, int64_t xo, double beta, void* y, int64_t yo, blobrt_error*) {
  return precision == BLOBRT_FLOAT64 ? gemv_typed<double>(ta, m, n, alpha, a, ao, x, xo, beta, y, yo)
                                     : gemv_typed<float>(ta, m, n, alpha, a, ao, x, xo, beta, y, yo);
}

template <typename T>
const T* operand(const void* buffer, int64_t offset) {
  return buffer ? static_cast<const T*>(buffer) + offset : nullptr;
}

int elementwise(void*, int32_t precision, int32_t op, int64_t n, double alpha, double beta, const void* a,
                int64_t ao, const void* b, int64_t bo, void* y, int64_t yo, blobrt_error* err) {
  const bool known =
      precision == BLOBRT_FLOAT64
          ? blobrt_kernels::elementwise<double>(op, n, alpha, beta, operand<double>(a, ao), operand<double>(b, bo),
                                                at<double>(y, yo))
          : blobrt_kernels::elementwise<float>(op, n, static_cast<float>(alpha), static_cast<float>(beta),
                                               operand<float>(a, ao), operand<float>(b, bo), at<float>(y, yo));
  return known ? BLOBRT_OK : blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "element-wise operation %d is not known", op);
}

int synchronize(void*, blobrt_error*) { return BLOBRT_OK; }

std::string library_version() { return std::string("BLIS ") + bli_info_get_version_str(); }

}  // namespace

extern "C" BLOBRT_PLUGIN_EXPORT const blobrt_plugin_v1* blobrt_plugin_entry_v1(uint32_t host_abi_major) {
  if (host_abi_major != BLOBRT_PLUGIN_ABI_MAJOR) return nullptr;
  static const std::string version = library_version();
  static const blobrt_plugin_v1 table = [] {
    blobrt_plugin_v1 t = kit::new_table("blis", version.c_str());
    BLOBRT_KIT_SET_REQUIRED(t);
    BLOBRT_KIT_SET_MATH(t);
    // No host_allocate/host_alias: device memory is host memory.
    return t;
  }();
  return &table;
}
