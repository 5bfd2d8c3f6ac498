// Level-1 kernels of the plugin's own for CPU devices (docs/opencl.md, "Kernels on CPU
// devices"): dot, asum, axpy and scal.
//
// Every kernel splits [0, n) into contiguous chunks, one per work-item, one work-item per
// work-group, a few chunks per compute unit: PoCL runs work-groups on all cores, so every
// core streams its own part of memory, with 8-wide vector loads and stores.
//
// Reductions: CLBlast's Xdot/Xasum are written for GPUs: a first kernel over a fixed number of
// work-groups, a second one that adds their results. On a CPU device (PoCL) that runs on
// too few threads, far below the memory bandwidth. Here each work-group is one work-item
// that reduces one contiguous chunk with 8-wide vector loads (blocks of 1024 elements
// added in float8, each block's sum added in double where the device has fp64, as the
// host kernels do); there are a few chunks per compute unit, so every core streams its own
// part of memory; the partial sums come back in one read and are added on the host in
// chunk order, so a result does not depend on scheduling. GPU devices keep CLBlast.
//
// axpy and scal: CLBlast's Xaxpy runs float at 0.63-0.72 of the streaming limit on PoCL
// (its work-items each touch a few elements spread by the work-group stride; PoCL's
// vectoriser does not turn that into full-width streams); the chunked loop below does.
#ifndef BLOBRT_OPENCL_CPU_KERNELS_HPP
#define BLOBRT_OPENCL_CPU_KERNELS_HPP

namespace blobrt_opencl {

// OpenCL C. ACC is double when the program is built with -DHAVE_FP64.
inline const char* cpu_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

#define BLOCK 1024

#define CHUNK_BOUNDS                       \
  const ulong g = get_global_id(0);        \
  const ulong begin = min(n, g * chunk);   \
  const ulong end = min(n, begin + chunk)

#define HSUM8(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3) + ((v).s4 + (v).s5) + ((v).s6 + (v).s7))

__kernel void blobrt_sdot(const ulong n, const ulong chunk, __global const float* x, const ulong xo,
                          __global const float* y, const ulong yo, __global acc_t* partial) {
  CHUNK_BOUNDS;
  x += xo;
  y += yo;
  acc_t total = 0;
  ulong i = begin;
  for (; i + BLOCK <= end; i += BLOCK) {
    float8 a = 0;
    for (ulong j = i; j < i + BLOCK; j += 8) a += vload8(0, x + j) * vload8(0, y + j);
    total += (acc_t)HSUM8(a);
  }
  float tail = 0;
  for (; i < end; ++i) tail += x[i] * y[i];
  partial[g] = total + (acc_t)tail;
}

__kernel void blobrt_sasum(const ulong n, const ulong chunk, __global const float* x, const ulong xo,
                           __global acc_t* partial) {
  CHUNK_BOUNDS;
  x += xo;
  acc_t total = 0;
  ulong i = begin;
  for (; i + BLOCK <= end; i += BLOCK) {
    float8 a = 0;
    for (ulong j = i; j < i + BLOCK; j += 8) a += fabs(vload8(0, x + j));
    total += (acc_t)HSUM8(a);
  }
  float tail = 0;
  for (; i < end; ++i) tail += fabs(x[i]);
  partial[g] = total + (acc_t)tail;
}

#define AXPY_SCAL(T, axpy_name, scal_name)                                                             \
  __kernel void axpy_name(const ulong n, const ulong chunk, const T alpha, __global const T* x,         \
                          const ulong xo, __global T* y, const ulong yo) {                              \
    CHUNK_BOUNDS;                                                                                       \
    x += xo;                                                                                            \
    y += yo;                                                                                            \
    ulong i = begin;                                                                                    \
    for (; i + 8 <= end; i += 8) vstore8(vload8(0, y + i) + alpha * vload8(0, x + i), 0, y + i);        \
    for (; i < end; ++i) y[i] += alpha * x[i];                                                          \
  }                                                                                                     \
  __kernel void scal_name(const ulong n, const ulong chunk, const T alpha, __global T* x, const ulong xo) { \
    CHUNK_BOUNDS;                                                                                       \
    x += xo;                                                                                            \
    ulong i = begin;                                                                                    \
    for (; i + 8 <= end; i += 8) vstore8(alpha * vload8(0, x + i), 0, x + i);                           \
    for (; i < end; ++i) x[i] *= alpha;                                                                 \
  }

AXPY_SCAL(float, blobrt_saxpy, blobrt_sscal)

#ifdef HAVE_FP64
AXPY_SCAL(double, blobrt_daxpy, blobrt_dscal)

__kernel void blobrt_ddot(const ulong n, const ulong chunk, __global const double* x, const ulong xo,
                          __global const double* y, const ulong yo, __global double* partial) {
  CHUNK_BOUNDS;
  x += xo;
  y += yo;
  double8 a = 0;
  ulong i = begin;
  for (; i + 8 <= end; i += 8) a += vload8(0, x + i) * vload8(0, y + i);
  double tail = 0;
  for (; i < end; ++i) tail += x[i] * y[i];
  partial[g] = HSUM8(a) + tail;
}

__kernel void blobrt_dasum(const ulong n, const ulong chunk, __global const double* x, const ulong xo,
                           __global double* partial) {
  CHUNK_BOUNDS;
  x += xo;
  double8 a = 0;
  ulong i = begin;
  for (; i + 8 <= end; i += 8) a += fabs(vload8(0, x + i));
  double tail = 0;
  for (; i < end; ++i) tail += fabs(x[i]);
  partial[g] = HSUM8(a) + tail;
}
#endif
)CLC";
}

}  // namespace blobrt_opencl

#endif
