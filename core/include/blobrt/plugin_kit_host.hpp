// The plugin kit's host-memory devices: every entry point of a device whose buffers are host
// pointers (a CPU backend), on blobrt's own kernels (the header-only blobrt_kernels,
// installed beside this header). Three layers, each a struct of static functions named as
// the table's fields (kit::table_of picks a derived struct's functions over its bases'):
//
//  - HostMemory: allocation, copies and memset on host pointers. libblobrt's built-in host
//    device runs on it too (and on HostMemoryDevice's kernels), so the two are one code.
//  - HostMemoryDevice: HostMemory plus one device, level 1, gemm, gemv and the
//    element-wise family on the kernels. A backend derives from it and writes only what
//    differs: its device_properties (start with fill_host_properties) and whichever
//    operations its library does better.
//  - HostBlasDevice<Calls>: a CPU BLAS library's axpy, scal, gemm and gemv on
//    HostMemoryDevice; Calls gives the library's typed calls, the kit the rest (offsets,
//    precision, splitting across cores). backends/blis is one.
//
//   struct MyCpu : blobrt::plugin_kit::HostMemoryDevice {
//     static int device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err);
//     static int gemm(...);  // any entry of plugin_abi.h's list, by its field name
//   };
//   BLOBRT_PLUGIN_DEFINE(MyCpu, "mycpu", "MyCPU 1.0")
//
// Buffers: 64-byte aligned, on transparent huge pages from 4 MiB (blobrt_kernels/
// huge_pages.hpp), as libblobrt's own host memory; large copies, memsets and level-1 calls
// are split across cores (blobrt_kernels/parallel.hpp: BLOBRT_NUM_THREADS). Compile with
// -fopenmp-simd (or -fopenmp) so the kernels' loops are vectorised.
#ifndef BLOBRT_PLUGIN_KIT_HOST_HPP
#define BLOBRT_PLUGIN_KIT_HOST_HPP

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <unistd.h>

#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_kit.hpp"
#include "blobrt_kernels/math_kernels.hpp"
#include "blobrt_kernels/small_gemm.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt::plugin_kit {

// Element `offset` of a buffer of T; null stays null (an operand an operation does not name).
template <typename T>
T* at(const void* buffer, int64_t offset) {
  return buffer ? const_cast<T*>(static_cast<const T*>(buffer)) + offset : nullptr;
}

// The machine's RAM in bytes, 0 when the system does not say.
inline uint64_t host_ram_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * page_size : 0;
}

// The properties every host-memory device shares: CPU, host pointers, fp64, the RAM.
inline void fill_host_properties(blobrt_device_properties* out) {
  out->memory_bytes = host_ram_bytes();
  out->kind = BLOBRT_DEVICE_KIND_CPU;
  out->host_memory = 1;
  out->supports_fp64 = 1;
  out->has_pinned_host = 0;
  set_native(out, BLOBRT_NATIVE_CPU, 0, true);
}

// Host memory: what a device whose handles are host pointers does with them.
struct HostMemory {
  static constexpr std::size_t kAlignment = 64;

  // `bytes` of host memory (at least one byte's block for 0), null when there is none.
  static void* allocate_bytes(size_t bytes) noexcept { return blobrt_kernels::allocate_host(bytes, kAlignment); }
  static int allocate(void*, size_t bytes, void** handle, blobrt_error* err) {
    *handle = allocate_bytes(bytes);
    if (*handle) return BLOBRT_OK;
    return blobrt_fail(err, BLOBRT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  }
  static void release(void*, void* handle) { std::free(handle); }

  static int copy_to_device(void*, const void* host, void* dst, size_t dst_offset, size_t bytes, blobrt_error*) {
    blobrt_kernels::copy_bytes(at<char>(dst, dst_offset), host, bytes);
    return BLOBRT_OK;
  }
  static int copy_to_host(void*, const void* src, size_t src_offset, void* host, size_t bytes, blobrt_error*) {
    blobrt_kernels::copy_bytes(host, at<char>(src, src_offset), bytes);
    return BLOBRT_OK;
  }
  static int copy_device(void*, const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes,
                         blobrt_error*) {
    blobrt_kernels::copy_bytes(at<char>(dst, dst_offset), at<char>(src, src_offset), bytes);
    return BLOBRT_OK;
  }
  static int memset(void*, void* dst, size_t offset, int32_t value, size_t bytes, blobrt_error*) {
    blobrt_kernels::fill_bytes(at<char>(dst, offset), value, bytes);
    return BLOBRT_OK;
  }
};

// A device of host memory on blobrt's kernels.
struct HostMemoryDevice : HostMemory {
  // One device, no context. A backend with setup to do on open defines its own.
  static int device_count(int32_t* count, blobrt_error*) {
    *count = 1;
    return BLOBRT_OK;
  }
  static int open_device(int32_t index, void** context, blobrt_error* err) {
    *context = nullptr;
    return check_index(err, "host-memory", index, 1);
  }
  static void close_device(void*) {}

  template <typename T>
  static int axpy(void*, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error*) {
    blobrt_kernels::axpy(n, alpha, at<T>(x, xo), at<T>(y, yo));
    return BLOBRT_OK;
  }
  template <typename T>
  static int dot(void*, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error*) {
    *r = blobrt_kernels::dot(n, at<T>(x, xo), at<T>(y, yo));
    return BLOBRT_OK;
  }
  template <typename T>
  static int asum(void*, int64_t n, const void* x, int64_t xo, T* r, blobrt_error*) {
    *r = blobrt_kernels::asum(n, at<T>(x, xo));
    return BLOBRT_OK;
  }
  template <typename T>
  static int scal(void*, int64_t n, T alpha, void* x, int64_t xo, blobrt_error*) {
    blobrt_kernels::scal(n, alpha, at<T>(x, xo));
    return BLOBRT_OK;
  }
  BLOBRT_KIT_LEVEL1_FROM_TEMPLATES  // the table's entries are plain functions, one per precision

  // Caffe's math operations (blobrt/math_operations.h; the core has checked the
  // arguments): each entry of the list runs its host kernel in place
  // (blobrt_kernels/math_operation.hpp).
#define BLOBRT_KIT_HOST_MATH_(X, since, name, parameters)                                              \
  static int name(void* parameters(BLOBRT_MATH_C_PARAMETER), blobrt_error* err) {                      \
    using Args = blobrt_kernels::MathArgs<blobrt_kernels::MathOp::name>;                                \
    return blobrt_kernels::run_in_place(Args{BLOBRT_MATH_LIST(parameters, BLOBRT_MATH_FORWARD)}, err);  \
  }
  BLOBRT_MATH_OPERATIONS(BLOBRT_KIT_HOST_MATH_, ~)
#undef BLOBRT_KIT_HOST_MATH_

  static int synchronize(void*, blobrt_error*) { return BLOBRT_OK; }
};

// A CPU BLAS library on HostMemoryDevice. Calls has the library's typed calls, overloaded
// for float and double (T), on contiguous host arrays (BLIS's typed API takes no const, so
// neither do these):
//   static void axpy(int64_t n, T alpha, T* x, T* y);                    // y += alpha x
//   static void scal(int64_t n, T alpha, T* x);                          // x *= alpha
//   static void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
//                    T* a, int64_t lda, T* b, int64_t ldb, T beta, T* c, int64_t ldc);  // row-major
//   static void gemv(bool trans, int64_t rows, int64_t cols, T alpha, T* a, int64_t lda,
//                    T* x, T beta, T* y);  // A rows x cols as stored, before transposition
// For a library that runs level 1 and gemv on one thread (as BLIS does), the kit splits
// them across blobrt's team: axpy and scal in contiguous chunks, a large gemv by bands of
// y (one call per band). gemm is one call on the calling thread, threaded or not as the
// library is, except for problems too small for the library's set-up to pay
// (blobrt_kernels/small_gemm.hpp: outer products and up to 2^15 multiply-adds). dot, asum,
// copies and the element-wise family stay on blobrt's kernels.
template <class Calls>
struct HostBlasDevice : HostMemoryDevice {
  template <typename T>
  static int axpy(void*, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error*) {
    T *xs = at<T>(x, xo), *ys = at<T>(y, yo);
    blobrt_kernels::parallel_for(n, [&](int64_t b, int64_t e) { Calls::axpy(e - b, alpha, xs + b, ys + b); });
    return BLOBRT_OK;
  }
  template <typename T>
  static int scal(void*, int64_t n, T alpha, void* x, int64_t xo, blobrt_error*) {
    T* xs = at<T>(x, xo);
    blobrt_kernels::parallel_for(n, [&](int64_t b, int64_t e) { Calls::scal(e - b, alpha, xs + b); });
    return BLOBRT_OK;
  }
  BLOBRT_KIT_LEVEL1_FROM_TEMPLATES  // this axpy and scal, HostMemoryDevice's dot and asum

  template <typename T>
  static void gemm_typed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t ao,
                         const void* b, int64_t bo, double beta, void* c, int64_t co) {
    if (blobrt_kernels::is_small_gemm(m, n, k)) {  // a library call's set-up would cost more
      blobrt_kernels::small_gemm(ta, tb, m, n, k, T(alpha), at<T>(a, ao), at<T>(b, bo), T(beta), at<T>(c, co));
      return;
    }
    Calls::gemm(ta, tb, m, n, k, T(alpha), at<T>(a, ao), ta ? m : k, at<T>(b, bo), tb ? k : n, T(beta), at<T>(c, co),
                n);
  }
  static int gemm(void*, int32_t precision, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, double alpha,
                  const void* a, int64_t ao, const void* b, int64_t bo, double beta, void* c, int64_t co,
                  blobrt_error*) {
    (precision == BLOBRT_FLOAT64 ? gemm_typed<double> : gemm_typed<float>)(ta == BLOBRT_TRANS, tb == BLOBRT_TRANS, m,
                                                                         n, k, alpha, a, ao, b, bo, beta, c, co);
    return BLOBRT_OK;
  }

  template <typename T>
  static void gemv_typed(bool t, int64_t m, int64_t n, double alpha, const void* a, int64_t ao, const void* x,
                         int64_t xo, double beta, void* y, int64_t yo) {
    T *as = at<T>(a, ao), *xs = at<T>(x, xo), *ys = at<T>(y, yo);
    const int64_t rows = t ? n : m, cols = t ? m : n;  // of op(A): y has `rows` elements
    // Each band reads at least ~2^17 elements of A.
    const int64_t threshold = std::max<int64_t>(64, (int64_t(1) << 19) / std::max<int64_t>(1, cols));
    blobrt_kernels::parallel_for(
        rows,
        [&](int64_t b, int64_t e) {
          if (t) Calls::gemv(true, m, e - b, T(alpha), as + b, n, xs, T(beta), ys + b);
          else Calls::gemv(false, e - b, n, T(alpha), as + b * n, n, xs, T(beta), ys + b);
        },
        threshold);
  }
  static int gemv(void*, int32_t precision, int32_t ta, int64_t m, int64_t n, double alpha, const void* a,
                  int64_t ao, const void* x, int64_t xo, double beta, void* y, int64_t yo, blobrt_error*) {
    (precision == BLOBRT_FLOAT64 ? gemv_typed<double> : gemv_typed<float>)(ta == BLOBRT_TRANS, m, n, alpha, a, ao, x,
                                                                         xo, beta, y, yo);
    return BLOBRT_OK;
  }
};

}  // namespace blobrt::plugin_kit

#endif
