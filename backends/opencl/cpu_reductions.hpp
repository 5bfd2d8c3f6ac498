// dot and asum of the plugin's own for CPU devices (docs/opencl.md, "Reductions").
//
// CLBlast's Xdot/Xasum are written for GPUs: a first kernel over a fixed number of
// work-groups, a second one that adds their results. On a CPU device (PoCL) that runs on
// too few threads, far below the memory bandwidth. Here each work-group is one work-item
// that reduces one contiguous chunk with 8-wide vector loads (blocks of 1024 elements
// added in float8, each block's sum added in double where the device has fp64, as the
// host kernels do); there are a few chunks per compute unit, so every core streams its own
// part of memory; the partial sums come back in one read and are added on the host in
// chunk order, so a result does not depend on scheduling. GPU devices keep CLBlast.
#ifndef BLOBRT_OPENCL_CPU_REDUCTIONS_HPP
#define BLOBRT_OPENCL_CPU_REDUCTIONS_HPP

namespace blobrt_opencl {

// OpenCL C. ACC is double when the program is built with -DHAVE_FP64.
inline const char* cpu_reduction_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

#define BLOCK 1024

#define HSUM8(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3) + ((v).s4 + (v).s5) + ((v).s6 + (v).s7))

__kernel void blobrt_sdot(const ulong n, const ulong chunk, __global const float* x, const ulong xo,
                          __global const float* y, const ulong yo, __global acc_t* partial) {
  const ulong g = get_global_id(0);
  const ulong begin = min(n, g * chunk);
  const ulong end = min(n, begin + chunk);
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
  const ulong g = get_global_id(0);
  const ulong begin = min(n, g * chunk);
  const ulong end = min(n, begin + chunk);
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

#ifdef HAVE_FP64
__kernel void blobrt_ddot(const ulong n, const ulong chunk, __global const double* x, const ulong xo,
                          __global const double* y, const ulong yo, __global double* partial) {
  const ulong g = get_global_id(0);
  const ulong begin = min(n, g * chunk);
  const ulong end = min(n, begin + chunk);
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
  const ulong g = get_global_id(0);
  const ulong begin = min(n, g * chunk);
  const ulong end = min(n, begin + chunk);
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
