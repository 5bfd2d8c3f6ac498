// A configurable test plugin. Without variant macros it is "simgpu": a simulated discrete
// device whose memory is NOT host memory and whose handles are opaque small integers,
// not pointers — any code that dereferences or offsets a handle breaks at once. That
// lets the SyncedMemory/Blob tests exercise every host<->device copy without a GPU.
//
// Variant macros (one per broken-plugin case the loader must survive):
//   TEST_PLUGIN_NO_ENTRY        exports no entry point
//   TEST_PLUGIN_TABLE_ABI=N     the table reports ABI major N
//   TEST_PLUGIN_SMALL_TABLE     struct_size too small
//   TEST_PLUGIN_INIT_FAILS      device_count fails
//   TEST_PLUGIN_ZERO_DEVICES    0 devices with a reason (like CUDA without a driver)
//   TEST_PLUGIN_WRONG_AXPY      saxpy does nothing (the conformance checks must catch it)
//   TEST_PLUGIN_NULL_OP         the table lacks sdot
//   TEST_PLUGIN_NO_FP64         supports_fp64 = 0 and the double ops fail
//   TEST_PLUGIN_MARKER          a constructor creates $BLOBRT_TEST_MARKER (proves code ran)
//   TEST_PLUGIN_NEEDS_GHOST     calls a function from a library that is not installed
//   TEST_PLUGIN_CRASH           device_count prints a line on stderr, then dies of SIGSEGV
//   TEST_PLUGIN_CRASH_IF        device_count dies of SIGSEGV if $BLOBRT_TEST_CRASH is set or
//                               the file $BLOBRT_TEST_CRASH_FILE exists, else works
//   TEST_PLUGIN_HANG            device_count never returns
//   TEST_PLUGIN_OPEN_CRASH      open dies of SIGSEGV
//   TEST_PLUGIN_OPEN_EXIT       open calls _exit(7)
//   TEST_PLUGIN_OPEN_HANG       open never returns
//   TEST_PLUGIN_ENV_REPORT      says what it sees of the environment (plain getenv, as a
//                               third-party library reads it, and the kit's): in its device's
//                               details, and as the reason its device will not open
//   TEST_PLUGIN_MATH_UNSUPPORTED offers gemm, gemv and elementwise (ABI 1.2) but answers
//                               every call BLOBRT_ERR_UNSUPPORTED (the core's host path)
//   TEST_PLUGIN_NOISY           prints a fake scanner answer on stdout and stderr, then works
//   TEST_PLUGIN_ALIASED         lends each buffer a host alias (host_alias_buffers) kept
//                               apart from the device's bytes, as an OpenCL map does, and
//                               synchronises the two only in sync_host_alias (ABI 1.4): a
//                               transition the core skips leaves stale bytes; a byte copy
//                               between a buffer and its own alias is refused
//   TEST_PLUGIN_ALIASED_V13     with TEST_PLUGIN_ALIASED: an ABI 1.3 table (no
//                               sync_host_alias): a copy onto the alias is the synchronisation
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <unistd.h>

#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_kit.hpp"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "simgpu"
#endif
#ifndef TEST_PLUGIN_TABLE_ABI
#define TEST_PLUGIN_TABLE_ABI BLOBRT_PLUGIN_ABI_MAJOR
#endif

#ifdef TEST_PLUGIN_NEEDS_GHOST
extern "C" int blobrt_ghost_function(void);
#endif

#ifdef TEST_PLUGIN_MARKER
__attribute__((constructor)) static void leave_marker() {
  const char* path = std::getenv("BLOBRT_TEST_MARKER");
  if (path) {
    if (FILE* f = std::fopen(path, "w")) std::fclose(f);
  }
}
#endif

namespace {

#ifdef TEST_PLUGIN_ENV_REPORT
void describe_environment(char* out, size_t size) {
  auto value = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "(unset)";
  };
  std::snprintf(out, size, "pid %d env: OCL_ICD_VENDORS=%s HOME=%s PATH=%s LANG=%s kit BLOBRT_OPENCL_KERNELS=%s.",
                static_cast<int>(::getpid()), value("OCL_ICD_VENDORS"), value("HOME"), value("PATH"), value("LANG"),
                blobrt::plugin_kit::getenv("BLOBRT_OPENCL_KERNELS").c_str());
}
#endif

// Device memory: buffers kept in a table, handed out as opaque ids starting at 1.
struct Memory {
  std::mutex mutex;
  std::map<std::uintptr_t, std::vector<char>> buffers;
#ifdef TEST_PLUGIN_ALIASED
  std::map<std::uintptr_t, std::vector<char>> aliases;  // the host memory lent for each buffer
#endif
  std::uintptr_t next = 1;
};
Memory& memory() {
  static Memory m;
  return m;
}

char* bytes_of(const void* handle, size_t offset, size_t length, blobrt_error* err, bool* ok) {
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.buffers.find(reinterpret_cast<std::uintptr_t>(handle));
  if (it == m.buffers.end()) {
    *ok = false;
    blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "unknown handle %p", handle);
    return nullptr;
  }
  if (offset > it->second.size() || length > it->second.size() - offset) {
    *ok = false;
    blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "range [%zu, %zu) outside buffer of %zu bytes",
                offset, offset + length, it->second.size());
    return nullptr;
  }
  *ok = true;
  return it->second.data() + offset;
}

#define RESOLVE(ptr, handle, offset, length) \
  bool ok_##ptr = true;                      \
  char* ptr = bytes_of(handle, offset, length, err, &ok_##ptr); \
  if (!ok_##ptr) return BLOBRT_ERR_INVALID_ARGUMENT;

template <typename T>
int axpy(void*, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err);
template <typename T>
int dot(void*, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err);
template <typename T>
int asum(void*, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err);
template <typename T>
int scal(void*, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err);

// The plugin's entry points, named as the table's fields: kit::table_of sets each one.
struct Sim {
  static int device_count(int32_t* count, blobrt_error* err);
  static int device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err);
  static int open_device(int32_t index, void** context, blobrt_error* err);
  static void close_device(void*) {}
  static int allocate(void*, size_t bytes, void** handle, blobrt_error* err);
  static void release(void*, void* handle);
  static int copy_to_device(void*, const void* host, void* dst, size_t off, size_t bytes, blobrt_error* err);
  static int copy_to_host(void*, const void* src, size_t off, void* host, size_t bytes, blobrt_error* err);
  static int copy_device(void*, const void* src, size_t so, void* dst, size_t dof, size_t bytes, blobrt_error* err);
  static int memset(void*, void* dst, size_t off, int32_t value, size_t bytes, blobrt_error* err);
  BLOBRT_KIT_LEVEL1_FROM_TEMPLATES  // axpy, dot, asum, scal below
  static int synchronize(void*, blobrt_error*) { return BLOBRT_OK; }
#ifdef TEST_PLUGIN_ALIASED
  static void* host_alias(void*, const void* handle);
#ifndef TEST_PLUGIN_ALIASED_V13
  static int sync_host_alias(void*, void* handle, size_t offset, size_t bytes, int32_t direction, blobrt_error* err);
#endif
#endif
#ifdef TEST_PLUGIN_MATH_UNSUPPORTED
  static int gemm(void*, int32_t, int32_t, int32_t, int64_t m, int64_t n, int64_t k, double, const void*, int64_t,
                  const void*, int64_t, double, void*, int64_t, blobrt_error* err);
  static int gemv(void*, int32_t, int32_t, int64_t, int64_t, double, const void*, int64_t, const void*, int64_t,
                  double, void*, int64_t, blobrt_error* err);
  static int elementwise(void*, int32_t, int32_t op, int64_t, double, double, const void*, int64_t, const void*,
                         int64_t, void*, int64_t, blobrt_error* err);
#endif
};

int Sim::device_count(int32_t* count, blobrt_error* err) {
#ifdef TEST_PLUGIN_NEEDS_GHOST
  (void)blobrt_ghost_function();
#endif
#if defined(TEST_PLUGIN_NOISY)
  // What the scanner's answer would look like, where the old protocol read it.
  std::printf("usable=0\nreason=fake answer from the plugin's stdout\n");
  std::fflush(stdout);
  std::fprintf(stderr, "blobrt-plugin-scanner protocol=1\nusable=0\nreason=fake\nend\n");
#endif
#if defined(TEST_PLUGIN_CRASH_IF)
  // A driver that works until something outside the plugin's files changes.
  const char* file = std::getenv("BLOBRT_TEST_CRASH_FILE");
  if (std::getenv("BLOBRT_TEST_CRASH") || (file && ::access(file, F_OK) == 0)) {
    std::fprintf(stderr, "test plugin: simulated driver fault after a change outside the plugin\n");
    std::raise(SIGSEGV);
  }
#endif
#if defined(TEST_PLUGIN_CRASH)
  std::fprintf(stderr, "test plugin: simulated driver fault at 0xdead\n");
  std::raise(SIGSEGV);
  return BLOBRT_OK;
#elif defined(TEST_PLUGIN_HANG)
  for (;;) ::pause();
#elif defined(TEST_PLUGIN_INIT_FAILS)
  return blobrt_fail(err, BLOBRT_ERR_FAILED, "simulated driver initialisation failure (code 42)");
#elif defined(TEST_PLUGIN_ZERO_DEVICES)
  *count = 0;
  blobrt_fail(err, BLOBRT_OK, "cudaGetDeviceCount: cudaErrorInsufficientDriver (simulated)");
  return BLOBRT_OK;
#else
  (void)err;
  *count = 1;
  return BLOBRT_OK;
#endif
}

int Sim::device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
  if (int status = blobrt::plugin_kit::check_index(err, TEST_PLUGIN_NAME, index, 1)) return status;
  blobrt::plugin_kit::set_text(out->name, "simulated discrete device (%s)", TEST_PLUGIN_NAME);
  blobrt::plugin_kit::set_text(out->details, "test plugin; opaque handles, separate memory");
#ifdef TEST_PLUGIN_ENV_REPORT
  describe_environment(out->details, sizeof out->details);
#endif
  out->memory_bytes = 1ull << 30;
  out->kind = BLOBRT_DEVICE_KIND_CPU;
  out->host_memory = 0;
#ifdef TEST_PLUGIN_NO_FP64
  out->supports_fp64 = 0;
#else
  out->supports_fp64 = 1;
#endif
  out->has_pinned_host = 0;
#ifdef TEST_PLUGIN_ALIASED
  out->host_alias_buffers = 1;
#endif
  return BLOBRT_OK;
}

int Sim::open_device(int32_t index, void** context, blobrt_error* err) {
  if (int status = blobrt::plugin_kit::check_index(err, TEST_PLUGIN_NAME, index, 1)) return status;
#if defined(TEST_PLUGIN_OPEN_CRASH)
  std::raise(SIGSEGV);
#elif defined(TEST_PLUGIN_OPEN_EXIT)
  ::_exit(7);
#elif defined(TEST_PLUGIN_OPEN_HANG)
  for (;;) ::pause();
#elif defined(TEST_PLUGIN_ENV_REPORT)
  char seen[512];
  describe_environment(seen, sizeof seen);
  return blobrt_fail(err, BLOBRT_ERR_FAILED, "%s", seen);
#elif defined(TEST_PLUGIN_OPEN_REFUSES)
  // A device that will not open for a reason outside the plugin's files (here: the
  // environment), which may be gone at the next start.
  if (std::getenv("BLOBRT_TEST_OPEN_REFUSES")) {
    return blobrt_fail(err, BLOBRT_ERR_FAILED, "device busy (BLOBRT_TEST_OPEN_REFUSES is set)");
  }
#endif
  *context = nullptr;
  return BLOBRT_OK;
}

int Sim::allocate(void*, size_t bytes, void** handle, blobrt_error* err) {
  if (bytes > (1ull << 34)) {
    return blobrt_fail(err, BLOBRT_ERR_OUT_OF_MEMORY, "simulated device has no room for %zu bytes", bytes);
  }
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  std::uintptr_t id = m.next++;
  // Filled with garbage: the core must zero what it hands out as zero.
  m.buffers[id].assign(bytes, static_cast<char>(0x5a));
#ifdef TEST_PLUGIN_ALIASED
  m.aliases[id].assign(bytes, static_cast<char>(0x3c));  // differs from the device's bytes
#endif
  *handle = reinterpret_cast<void*>(id);
  return BLOBRT_OK;
}
void Sim::release(void*, void* handle) {
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.buffers.erase(reinterpret_cast<std::uintptr_t>(handle));
#ifdef TEST_PLUGIN_ALIASED
  m.aliases.erase(reinterpret_cast<std::uintptr_t>(handle));
#endif
}

#ifdef TEST_PLUGIN_ALIASED
char* alias_of(const void* handle) {
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.aliases.find(reinterpret_cast<std::uintptr_t>(handle));
  return it == m.aliases.end() ? nullptr : it->second.data();
}
void* Sim::host_alias(void*, const void* handle) { return alias_of(handle); }

// Whether `host` is the alias of `handle` at `off`: a copy there is a synchronisation, which
// the 1.4 variant wants through sync_host_alias.
int check_not_alias(const void* handle, size_t off, const void* host, const char* call, blobrt_error* err) {
#ifdef TEST_PLUGIN_ALIASED_V13
  (void)handle, (void)off, (void)host, (void)call, (void)err;
#else
  const char* alias = alias_of(handle);
  if (alias && alias + off == host) {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT,
                       "%s between a buffer and its own host alias: an ABI 1.4 core calls sync_host_alias", call);
  }
#endif
  return BLOBRT_OK;
}

#ifndef TEST_PLUGIN_ALIASED_V13
int Sim::sync_host_alias(void*, void* handle, size_t offset, size_t bytes, int32_t direction, blobrt_error* err) {
  if (bytes == 0) return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "sync_host_alias of 0 bytes");
  RESOLVE(device_bytes, handle, offset, bytes);
  char* alias = alias_of(handle) + offset;
  if (direction == BLOBRT_ALIAS_TO_HOST) {
    std::memcpy(alias, device_bytes, bytes);
  } else if (direction == BLOBRT_ALIAS_TO_DEVICE) {
    std::memcpy(device_bytes, alias, bytes);
  } else {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "sync_host_alias: unknown direction %d",
                       static_cast<int>(direction));
  }
  return BLOBRT_OK;
}
#endif
#else
int check_not_alias(const void*, size_t, const void*, const char*, blobrt_error*) { return BLOBRT_OK; }
#endif

int Sim::copy_to_device(void*, const void* host, void* dst, size_t off, size_t bytes, blobrt_error* err) {
  if (int status = check_not_alias(dst, off, host, "copy_to_device", err)) return status;
  RESOLVE(d, dst, off, bytes);
  if (bytes) std::memcpy(d, host, bytes);
  return BLOBRT_OK;
}
int Sim::copy_to_host(void*, const void* src, size_t off, void* host, size_t bytes, blobrt_error* err) {
  if (int status = check_not_alias(src, off, host, "copy_to_host", err)) return status;
  RESOLVE(s, src, off, bytes);
  if (bytes) std::memcpy(host, s, bytes);
  return BLOBRT_OK;
}
int Sim::copy_device(void*, const void* src, size_t so, void* dst, size_t dof, size_t bytes, blobrt_error* err) {
  RESOLVE(s, src, so, bytes);
  RESOLVE(d, dst, dof, bytes);
  if (bytes) std::memmove(d, s, bytes);
  return BLOBRT_OK;
}
int Sim::memset(void*, void* dst, size_t off, int32_t value, size_t bytes, blobrt_error* err) {
  RESOLVE(d, dst, off, bytes);
  if (bytes) std::memset(d, value, bytes);
  return BLOBRT_OK;
}

template <typename T>
int check_type(blobrt_error* err) {
#ifdef TEST_PLUGIN_NO_FP64
  if (sizeof(T) == 8) return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "no fp64 on this simulated device");
#endif
  (void)err;
  return BLOBRT_OK;
}

template <typename T>
int axpy(void*, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
  if (int s = check_type<T>(err)) return s;
  if (n <= 0) return BLOBRT_OK;  // nothing to do, as BLAS (plugin_abi.h): the plugin answers it
  RESOLVE(xs, x, xo * sizeof(T), n * sizeof(T));
  RESOLVE(ys, y, yo * sizeof(T), n * sizeof(T));
#ifndef TEST_PLUGIN_WRONG_AXPY
  const T* a = reinterpret_cast<const T*>(xs);
  T* b = reinterpret_cast<T*>(ys);
  for (int64_t i = 0; i < n; ++i) b[i] += alpha * a[i];
#else
  (void)alpha;
  (void)xs;
  (void)ys;
#endif
  return BLOBRT_OK;
}
template <typename T>
int dot(void*, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err) {
  if (int s = check_type<T>(err)) return s;
  *r = 0;
  if (n <= 0) return BLOBRT_OK;
  RESOLVE(xs, x, xo * sizeof(T), n * sizeof(T));
  RESOLVE(ys, y, yo * sizeof(T), n * sizeof(T));
  const T* a = reinterpret_cast<const T*>(xs);
  const T* b = reinterpret_cast<const T*>(ys);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  *r = static_cast<T>(sum);
  return BLOBRT_OK;
}
template <typename T>
int asum(void*, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err) {
  if (int s = check_type<T>(err)) return s;
  *r = 0;
  if (n <= 0) return BLOBRT_OK;
  RESOLVE(xs, x, xo * sizeof(T), n * sizeof(T));
  const T* a = reinterpret_cast<const T*>(xs);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(static_cast<double>(a[i]));
  *r = static_cast<T>(sum);
  return BLOBRT_OK;
}
template <typename T>
int scal(void*, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err) {
  if (int s = check_type<T>(err)) return s;
  if (n <= 0) return BLOBRT_OK;
  RESOLVE(xs, x, xo * sizeof(T), n * sizeof(T));
  T* a = reinterpret_cast<T*>(xs);
  for (int64_t i = 0; i < n; ++i) a[i] *= alpha;
  return BLOBRT_OK;
}

#ifdef TEST_PLUGIN_MATH_UNSUPPORTED
int Sim::gemm(void*, int32_t, int32_t, int32_t, int64_t m, int64_t n, int64_t k, double, const void*, int64_t,
              const void*, int64_t, double, void*, int64_t, blobrt_error* err) {
  return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "gemm %lldx%lldx%lld not offered here", static_cast<long long>(m),
                     static_cast<long long>(n), static_cast<long long>(k));
}
int Sim::gemv(void*, int32_t, int32_t, int64_t, int64_t, double, const void*, int64_t, const void*, int64_t,
              double, void*, int64_t, blobrt_error* err) {
  return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "gemv not offered here");
}
int Sim::elementwise(void*, int32_t, int32_t op, int64_t, double, double, const void*, int64_t, const void*, int64_t,
                     void*, int64_t, blobrt_error* err) {
  return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "element-wise operation %d not offered here", static_cast<int>(op));
}
#endif

}  // namespace

#ifndef TEST_PLUGIN_NO_ENTRY
extern "C" BLOBRT_PLUGIN_EXPORT const blobrt_plugin_v1* blobrt_plugin_entry_v1(uint32_t) {
  static const blobrt_plugin_v1 table = [] {
    blobrt_plugin_v1 t = blobrt::plugin_kit::table_of<Sim>(TEST_PLUGIN_NAME, "test plugin 1.0");
    t.abi_major = TEST_PLUGIN_TABLE_ABI;
#ifdef TEST_PLUGIN_SMALL_TABLE
    t.struct_size = 16;
#endif
#ifdef TEST_PLUGIN_ALIASED_V13
    t.struct_size = BLOBRT_PLUGIN_V1_3_SIZE;  // what a plugin built against ABI 1.3 hands over
    t.abi_minor = 3;
#endif
#ifdef TEST_PLUGIN_NULL_OP
    t.sdot = nullptr;
#endif
    return t;
  }();
  return &table;
}
#endif
