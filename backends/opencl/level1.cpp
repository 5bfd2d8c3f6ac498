// The OpenCL plugin's level-1 BLAS (axpy, scal, dot, asum). Which way a launch goes is
// picked once per context, when it opens (pick_level1_routes), from what the device is:
//  - OwnKernels: the plugin's own kernels (cpu_kernels.hpp) on CPU devices, where CLBlast's
//    kernels launch too few work-groups (docs/opencl.md);
//  - Clblast: CLBlast on every other device, and everywhere with
//    BLOBRT_OPENCL_KERNELS=clblast.
// Before it, OnHost: on a device that uses host memory in place (uses_host_memory_in_place,
// also decided at open), a call under kHostPathElements elements runs on that memory (a
// clFinish and the host kernels: cheaper than any launch). What is left to each call is
// that size test.
#include <algorithm>
#include <cstdint>
#include <mutex>

#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_kit.hpp"
#include "blobrt_kernels/level1.hpp"
#include "context.hpp"
#include "cpu_kernels.hpp"

namespace blobrt_opencl {

namespace {

namespace kit = blobrt::plugin_kit;

// Builds the CPU kernels once per context (called under c->mutex).
int build_cpu_kernels(Context* c, blobrt_error* err) {
  if (c->cpu_program) return BLOBRT_OK;
  cl_program program = nullptr;
  if (int s = build_program(c, cpu_kernel_source(), "level-1 CPU kernels", &program, err)) return s;
  cl_int status = CL_SUCCESS;
  for (int i = 0; i < kCpuKernelCount && status == CL_SUCCESS; ++i) {
    if (i < kDoubleKernels || c->fp64) c->kernels[i] = clCreateKernel(program, kCpuKernelNames[i], &status);
  }
  if (status == CL_SUCCESS) {
    c->partials = clCreateBuffer(c->context, CL_MEM_READ_WRITE, c->parts * sizeof(double), nullptr, &status);
  }
  if (status != CL_SUCCESS) {
    // Nothing half-built stays behind: the next call tries again.
    for (cl_kernel& k : c->kernels) {
      if (k) clReleaseKernel(k);
      k = nullptr;
    }
    clReleaseProgram(program);
    return cl_fail(err, "clCreateKernel/clCreateBuffer (CPU kernels)", status);
  }
  c->cpu_program = program;  // released with the kernels in close_device
  return BLOBRT_OK;
}

// One launch of CPU kernel `which` (for precision T) over [0, n), n > 0, in whole
// 1024-element chunks (BLOCK in cpu_kernels.hpp), at most c->parts of them; called under
// c->mutex. Arguments 0 and 1 are n and the chunk length; `set_args(kernel)` sets the rest.
// Returns the number of chunks in *parts.
template <typename T, typename SetArgs>
int launch_cpu_kernel(Context* c, CpuKernel which, int64_t n, cl_ulong* parts, SetArgs set_args, blobrt_error* err) {
  if (int s = build_cpu_kernels(c, err)) return s;
  const int index = which + (sizeof(T) == 8 ? kDoubleKernels : 0);
  cl_kernel kernel = c->kernels[index];
  const char* name = kCpuKernelNames[index];
  constexpr cl_ulong kBlock = 1024;
  cl_ulong count = static_cast<cl_ulong>(n);
  cl_ulong most = std::min<cl_ulong>(c->parts, (count + kBlock - 1) / kBlock);
  cl_ulong chunk = ((count + most - 1) / most + kBlock - 1) / kBlock * kBlock;
  *parts = (count + chunk - 1) / chunk;
  cl_int status = clSetKernelArg(kernel, 0, sizeof count, &count);
  if (status == CL_SUCCESS) status = clSetKernelArg(kernel, 1, sizeof chunk, &chunk);
  if (status == CL_SUCCESS) status = set_args(kernel);
  if (status != CL_SUCCESS) return cl_fail(err, name, status);
  size_t global = *parts;
  size_t local = 1;  // one work-item per work-group: the groups spread over the cores
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), name);
  return BLOBRT_OK;
}

// The partial sums of a reduction launched in `parts` chunks, added on the host in double.
// c->parts, and so parts, is at most kMaxCpuKernelParts (open_device caps it).
template <typename P>
int sum_partials(Context* c, cl_ulong parts, double* sum, blobrt_error* err) {
  static_assert(sizeof(P) <= sizeof(double), "the partials buffer holds doubles");
  P partial[kMaxCpuKernelParts];
  if (parts > kMaxCpuKernelParts) {
    return blobrt_fail(err, BLOBRT_ERR_FAILED, "a reduction in %llu parts (at most %zu)",
                       static_cast<unsigned long long>(parts), kMaxCpuKernelParts);
  }
  CL_CHECK(clEnqueueReadBuffer(c->queue, c->partials, CL_TRUE, 0, parts * sizeof(P), partial, 0, nullptr, nullptr),
           "clEnqueueReadBuffer (reduction partial sums)");
  *sum = 0;
  for (cl_ulong i = 0; i < parts; ++i) *sum += partial[i];
  return BLOBRT_OK;
}

// The plugin's own kernels (CPU devices).
struct OwnKernels {
  template <typename T>
  static int axpy(Context* c, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
    std::lock_guard<std::mutex> lock(c->mutex);
    cl_ulong parts = 0;
    return launch_cpu_kernel<T>(c, kAxpy, n, &parts, [&](cl_kernel k) {
      return set_kernel_args(k, 2, alpha, as_mem(x), static_cast<cl_ulong>(xo), as_mem(y), static_cast<cl_ulong>(yo));
    }, err);
  }
  template <typename T>
  static int scal(Context* c, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err) {
    std::lock_guard<std::mutex> lock(c->mutex);
    cl_ulong parts = 0;
    return launch_cpu_kernel<T>(c, kScal, n, &parts, [&](cl_kernel k) {
      return set_kernel_args(k, 2, alpha, as_mem(x), static_cast<cl_ulong>(xo));
    }, err);
  }
  template <typename T>
  static int dot(Context* c, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err) {
    return reduce<T>(c, kDot, 6, n, r, [&](cl_kernel k) {
      return set_kernel_args(k, 2, as_mem(x), static_cast<cl_ulong>(xo), as_mem(y), static_cast<cl_ulong>(yo));
    }, err);
  }
  template <typename T>
  static int asum(Context* c, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err) {
    return reduce<T>(c, kAsum, 4, n, r, [&](cl_kernel k) { return set_kernel_args(k, 2, as_mem(x), static_cast<cl_ulong>(xo)); },
                     err);
  }

 private:
  // A reduction: `set_vectors(kernel)` sets the vector arguments (handles and offsets)
  // from 2 on; the partial sums are argument `partial_arg`.
  template <typename T, typename SetVectors>
  static int reduce(Context* c, CpuKernel which, cl_uint partial_arg, int64_t n, T* result, SetVectors set_vectors,
                    blobrt_error* err) {
    std::lock_guard<std::mutex> lock(c->mutex);
    cl_ulong parts = 0;
    if (int s = launch_cpu_kernel<T>(c, which, n, &parts, [&](cl_kernel k) {
          cl_int status = set_vectors(k);
          return status == CL_SUCCESS ? set_kernel_args(k, partial_arg, c->partials) : status;
        }, err)) {
      return s;
    }
    // The float kernels add in double where the device has it, as the double ones do.
    double sum = 0;
    const int s = sizeof(T) == 8 || c->fp64 ? sum_partials<double>(c, parts, &sum, err)
                                            : sum_partials<float>(c, parts, &sum, err);
    if (s == BLOBRT_OK) *result = static_cast<T>(sum);
    return s;
  }
};

// CLBlast.
struct Clblast {
  template <typename T>
  static int axpy(Context* c, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
    const char* routine = kit::by_precision<T>("clblast::Axpy<float>", "clblast::Axpy<double>");
    return blast_call(c, err, routine, routine,
                      [&] { return clblast::Axpy<T>(n, alpha, as_mem(x), xo, 1, as_mem(y), yo, 1, &c->queue, nullptr); });
  }
  template <typename T>
  static int scal(Context* c, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err) {
    const char* routine = kit::by_precision<T>("clblast::Scal<float>", "clblast::Scal<double>");
    return blast_call(c, err, routine, routine,
                      [&] { return clblast::Scal<T>(n, alpha, as_mem(x), xo, 1, &c->queue, nullptr); });
  }
  template <typename T>
  static int dot(Context* c, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err) {
    return reduce<T>(c, r, kit::by_precision<T>("clblast::Dot<float>", "clblast::Dot<double>"), [&](cl_mem out) {
      return clblast::Dot<T>(n, out, 0, as_mem(x), xo, 1, as_mem(y), yo, 1, &c->queue, nullptr);
    }, err);
  }
  template <typename T>
  static int asum(Context* c, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err) {
    return reduce<T>(c, r, kit::by_precision<T>("clblast::Asum<float>", "clblast::Asum<double>"), [&](cl_mem out) {
      return clblast::Asum<T>(n, out, 0, as_mem(x), xo, 1, &c->queue, nullptr);
    }, err);
  }

 private:
  // A CLBlast reduction into the scratch buffer, the scalar read back.
  template <typename T, typename Launch>
  static int reduce(Context* c, T* result, const char* name, Launch launch, blobrt_error* err) {
    std::lock_guard<std::mutex> lock(c->mutex);
    if (int s = blast_call(c, err, name, name, [&] { return launch(c->scratch); })) return s;
    CL_CHECK(clEnqueueReadBuffer(c->queue, c->scratch, CL_TRUE, 0, sizeof(T), result, 0, nullptr, nullptr),
             "clEnqueueReadBuffer (reduction result)");
    return BLOBRT_OK;
  }
};

// Small calls on the host memory the device uses in place: true when done (*status set).
struct OnHost {
  template <typename T>
  static bool axpy(Context* c, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, int* status,
                   blobrt_error* err) {
    T* ys = host_operand<T>(c, n, y, yo);
    const T* xs = ys ? host_operand<T>(c, n, x, xo) : nullptr;
    if (!xs) return false;
    *status = finish(c, err);  // every command enqueued before has run
    if (*status == BLOBRT_OK) blobrt_kernels::chunk::axpy(n, alpha, xs, ys);
    return true;
  }
  template <typename T>
  static bool scal(Context* c, int64_t n, T alpha, void* x, int64_t xo, int* status, blobrt_error* err) {
    T* xs = host_operand<T>(c, n, x, xo);
    if (!xs) return false;
    *status = finish(c, err);
    if (*status == BLOBRT_OK) blobrt_kernels::chunk::scal(n, alpha, xs);
    return true;
  }
  template <typename T>
  static bool dot(Context* c, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, int* status,
                  blobrt_error* err) {
    const T* xs = host_operand<T>(c, n, x, xo);
    const T* ys = xs ? host_operand<T>(c, n, y, yo) : nullptr;
    if (!ys) return false;
    *status = finish(c, err);
    if (*status == BLOBRT_OK) *r = static_cast<T>(blobrt_kernels::chunk::dot(n, xs, ys));
    return true;
  }
  template <typename T>
  static bool asum(Context* c, int64_t n, const void* x, int64_t xo, T* r, int* status, blobrt_error* err) {
    const T* xs = host_operand<T>(c, n, x, xo);
    if (!xs) return false;
    *status = finish(c, err);
    if (*status == BLOBRT_OK) *r = static_cast<T>(blobrt_kernels::chunk::asum(n, xs));
    return true;
  }

 private:
  static int finish(Context* c, blobrt_error* err) {
    CL_CHECK(clFinish(c->queue), "clFinish");
    return BLOBRT_OK;
  }
};

template <class Way, typename T>
const Level1Route<T> kRoute = {&Way::template axpy<T>, &Way::template scal<T>, &Way::template dot<T>,
                               &Way::template asum<T>};

template <class Way>
void use(Context* c) {
  c->level1_float = &kRoute<Way, float>;
  c->level1_double = &kRoute<Way, double>;
}

template <typename T>
const Level1Route<T>& route(Context* c) {
  if constexpr (sizeof(T) == 8) {
    return *c->level1_double;
  } else {
    return *c->level1_float;
  }
}

// The entry points (libblobrt has refused double precision where the device lacks it):
// n <= 0 answered, a small call on host memory used in place done there, the rest by the
// context's route.
template <typename T>
int axpy(void* context, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
  Context* c = as_context(context);
  int status = BLOBRT_OK;
  if (n <= 0 || OnHost::axpy<T>(c, n, alpha, x, xo, y, yo, &status, err)) return status;
  return route<T>(c).axpy(c, n, alpha, x, xo, y, yo, err);
}
template <typename T>
int scal(void* context, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err) {
  Context* c = as_context(context);
  int status = BLOBRT_OK;
  if (n <= 0 || OnHost::scal<T>(c, n, alpha, x, xo, &status, err)) return status;
  return route<T>(c).scal(c, n, alpha, x, xo, err);
}
template <typename T>
int dot(void* context, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err) {
  Context* c = as_context(context);
  *r = 0;
  int status = BLOBRT_OK;
  if (n <= 0 || OnHost::dot<T>(c, n, x, xo, y, yo, r, &status, err)) return status;
  return route<T>(c).dot(c, n, x, xo, y, yo, r, err);
}
template <typename T>
int asum(void* context, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err) {
  Context* c = as_context(context);
  *r = 0;
  int status = BLOBRT_OK;
  if (n <= 0 || OnHost::asum<T>(c, n, x, xo, r, &status, err)) return status;
  return route<T>(c).asum(c, n, x, xo, r, err);
}

}  // namespace

void pick_level1_routes(Context* c) { c->own_kernels ? use<OwnKernels>(c) : use<Clblast>(c); }

int saxpy(void* c, int64_t n, float alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
  return axpy<float>(c, n, alpha, x, xo, y, yo, err);
}
int daxpy(void* c, int64_t n, double alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
  return axpy<double>(c, n, alpha, x, xo, y, yo, err);
}
int sscal(void* c, int64_t n, float alpha, void* x, int64_t xo, blobrt_error* err) {
  return scal<float>(c, n, alpha, x, xo, err);
}
int dscal(void* c, int64_t n, double alpha, void* x, int64_t xo, blobrt_error* err) {
  return scal<double>(c, n, alpha, x, xo, err);
}
int sdot(void* c, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, float* r, blobrt_error* err) {
  return dot<float>(c, n, x, xo, y, yo, r, err);
}
int ddot(void* c, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, double* r, blobrt_error* err) {
  return dot<double>(c, n, x, xo, y, yo, r, err);
}
int sasum(void* c, int64_t n, const void* x, int64_t xo, float* r, blobrt_error* err) {
  return asum<float>(c, n, x, xo, r, err);
}
int dasum(void* c, int64_t n, const void* x, int64_t xo, double* r, blobrt_error* err) {
  return asum<double>(c, n, x, xo, r, err);
}

}  // namespace blobrt_opencl
