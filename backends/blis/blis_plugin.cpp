// The CPU backend on BLIS. Device memory is host memory (64-byte aligned), so the core
// never copies between the host mirror and this device. axpy and scal go to BLIS's
// typed vector API (bli_?axpyv, bli_?scalv: 64-bit lengths in this build), one contiguous
// chunk per core for large n: BLIS runs level-1 routines on one thread, which cannot
// saturate the memory bus. asum and dot do not: BLIS 0.9's ?asumv is not vectorised and
// its ?dotv stays below the streaming limit, where ours reach it (the raw-BLIS rows of
// docs/performance-results.md), so our kernels take them over. memset and copies use the
// same chunking.
#include <blis.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "blobrt/plugin_abi.h"
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

int open_device(int32_t index, void** context, blobrt_error* err) {
  if (int status = kit::check_index(err, "blis", index, 1)) return status;
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

int synchronize(void*, blobrt_error*) { return BLOBRT_OK; }

std::string library_version() { return std::string("BLIS ") + bli_info_get_version_str(); }

}  // namespace

extern "C" BLOBRT_PLUGIN_EXPORT const blobrt_plugin_v1* blobrt_plugin_entry_v1(uint32_t host_abi_major) {
  if (host_abi_major != BLOBRT_PLUGIN_ABI_MAJOR) return nullptr;
  static const std::string version = library_version();
  static const blobrt_plugin_v1 table = [] {
    blobrt_plugin_v1 t = kit::new_table("blis", version.c_str());
    BLOBRT_KIT_SET_REQUIRED(t);
    // No host_allocate/host_alias: device memory is host memory.
    return t;
  }();
  return &table;
}
