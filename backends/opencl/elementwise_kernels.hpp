// Caffe's element-wise family (plugin_abi.h, blobrt_elementwise_op) as OpenCL C: one
// kernel per operation and precision, blobrt_ew_<op>_<f|d> (docs/opencl.md,
// "Element-wise operations"): the program built once per context at the first element-wise
// call, each kernel made at its code's first call (elementwise.cpp); a code of the list
// (blobrt/elementwise_operations.h) with no kernel here answers BLOBRT_ERR_UNSUPPORTED.
//
// Every kernel takes (n, chunk, alpha, beta, a, a_offset, b, b_offset, y, y_offset, nt),
// offsets in elements, and work-item g does elements [g * chunk, g * chunk + chunk) with 8-wide
// vector loads and stores, then a scalar tail. The host picks the chunk: on CPU devices a
// few long contiguous chunks per compute unit, one work-item per work-group (every core
// streams its own part of memory, as cpu_kernels.hpp does); elsewhere 8 elements per
// work-item, so neighbouring work-items touch neighbouring memory (coalesced on GPUs).
// An operand an operation does not read is never loaded (VA, VB, VY expand only where the
// expression names them). y may be a or b exactly: each element is read before it is written.
#ifndef BLOBRT_OPENCL_ELEMENTWISE_KERNELS_HPP
#define BLOBRT_OPENCL_ELEMENTWISE_KERNELS_HPP

namespace blobrt_opencl {

// Kernel names are "blobrt_ew_" + the operation's name (blobrt_kernels::elementwise_op_name)
// + "_f" / "_d".

inline const char* elementwise_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define VA vload8(0, a + i)
#define VB vload8(0, b + i)
#define VY vload8(0, y + i)

/* Streaming stores (nt = 1, chosen by the host for vectors larger than the device's cache
 * whose destination is not read): no read-for-ownership of y's lines, as the bandwidth
 * probe's "stream" variant. Where the compiler has no such builtin, an ordinary store. */
#if defined(__clang__) && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define STORE8_NT(v, p) __builtin_nontemporal_store((v), (__global REAL8*)(p))
#endif
#endif
#ifndef STORE8_NT
#define STORE8_NT(v, p) vstore8((v), 0, (p))
#endif

#define EW_KERNEL(SUFFIX, NAME, VEXPR, SEXPR)                                                           \
  __kernel void blobrt_ew_##NAME##_##SUFFIX(const ulong n, const ulong chunk, const REAL alpha,         \
                                            const REAL beta, __global const REAL* a, const ulong ao,    \
                                            __global const REAL* b, const ulong bo, __global REAL* y,   \
                                            const ulong yo, const uint nt) {                            \
    const ulong begin = min(n, get_global_id(0) * chunk);                                               \
    const ulong end = min(n, begin + chunk);                                                            \
    a += ao;                                                                                            \
    b += bo;                                                                                            \
    y += yo;                                                                                            \
    ulong i = begin;                                                                                    \
    if (nt) {                                                                                           \
      for (; i + 8 <= end; i += 8) STORE8_NT(VEXPR, y + i);                                             \
    } else {                                                                                            \
      for (; i + 8 <= end; i += 8) vstore8(VEXPR, 0, y + i);                                            \
    }                                                                                                   \
    for (; i < end; ++i) y[i] = SEXPR;                                                                  \
  }

/* Caffe's sign is (0 < a) - (a < 0): +0 for -0 and NaN; OpenCL's sign gives -0 for -0, so
 * + 0 turns that into +0. sgnbit is the sign bit shifted down (PoCL scalarises a vector
 * signbit + select: 5x slower). */
#define EW_ALL(S)                                                                                      \
  EW_KERNEL(S, set, (REAL8)(alpha), alpha)                                                             \
  EW_KERNEL(S, add_scalar, VY + alpha, y[i] + alpha)                                                   \
  EW_KERNEL(S, scale, alpha * VA, alpha * a[i])                                                        \
  EW_KERNEL(S, axpby, alpha * VA + beta * VY, alpha * a[i] + beta * y[i])                              \
  EW_KERNEL(S, add, VA + VB, a[i] + b[i])                                                              \
  EW_KERNEL(S, sub, VA - VB, a[i] - b[i])                                                              \
  EW_KERNEL(S, mul, VA * VB, a[i] * b[i])                                                              \
  EW_KERNEL(S, div, VA / VB, a[i] / b[i])                                                              \
  EW_KERNEL(S, powx, pow(VA, (REAL8)(alpha)), pow(a[i], alpha))                                        \
  EW_KERNEL(S, sqr, VA * VA, a[i] * a[i])                                                              \
  EW_KERNEL(S, sqrt, sqrt(VA), sqrt(a[i]))                                                             \
  EW_KERNEL(S, exp, exp(VA), exp(a[i]))                                                                \
  EW_KERNEL(S, log, log(VA), log(a[i]))                                                                \
  EW_KERNEL(S, abs, fabs(VA), fabs(a[i]))                                                              \
  EW_KERNEL(S, sign, sign(VA) + (REAL8)(0), (REAL)((0 < a[i]) - (a[i] < 0)))                           \
  EW_KERNEL(S, sgnbit, CONVERT8(AS_BITS8(VA) >> SIGN_SHIFT), (REAL)(signbit(a[i]) != 0))          \
  EW_KERNEL(S, relu, select(VA * alpha, VA, VA > (REAL8)(0)), a[i] > 0 ? a[i] : a[i] * alpha)          \
  EW_KERNEL(S, relu_backward,                                                                          \
            VB * (select((REAL8)(0), (REAL8)(1), VA > (REAL8)(0)) +                                    \
                  select((REAL8)(0), (REAL8)(alpha), VA <= (REAL8)(0))),                               \
            b[i] * ((REAL)(a[i] > 0) + (REAL)(a[i] <= 0) * alpha))                                     \
  EW_KERNEL(S, sigmoid, SIGMOID8(VA), SIGMOID1(a[i]))                                                \
  EW_KERNEL(S, sigmoid_backward, VB * VA * ((REAL)1 - VA), b[i] * a[i] * ((REAL)1 - a[i]))            \
  EW_KERNEL(S, tanh, tanh(VA), tanh(a[i]))                                                             \
  EW_KERNEL(S, tanh_backward, VB * ((REAL)1 - VA * VA), b[i] * ((REAL)1 - a[i] * a[i]))            \
  EW_KERNEL(S, elu, select(alpha * (exp(VA) - (REAL8)(1)), VA, VA > (REAL8)(0)),                      \
            a[i] > 0 ? a[i] : alpha * (exp(a[i]) - 1))                                                 \
  EW_KERNEL(S, elu_backward, select(VB * (VA + (REAL8)(alpha)), VB, VA > (REAL8)(0)),                 \
            a[i] > 0 ? b[i] : b[i] * (a[i] + alpha))                                                   \
  EW_KERNEL(S, bnll, BNLL8(VA), BNLL1(a[i]))                                                           \
  EW_KERNEL(S, bnll_backward, BNLL_BACKWARD8(VA, VB), BNLL_BACKWARD1(a[i], b[i]))                      \
  EW_KERNEL(S, threshold, select((REAL8)(0), (REAL8)(1), VA > (REAL8)(alpha)), a[i] > alpha ? 1 : 0)   \
  EW_KERNEL(S, clip, fmax((REAL8)(alpha), fmin(VA, (REAL8)(beta))), fmax(alpha, fmin(a[i], beta)))    \
  EW_KERNEL(S, clip_backward,                                                                          \
            VB * select((REAL8)(0), (REAL8)(1), (VA >= (REAL8)(alpha)) & (VA <= (REAL8)(beta))),        \
            b[i] * (REAL)(a[i] >= alpha && a[i] <= beta))                                              \
  EW_KERNEL(S, max_step, select(VB, VA, VA > VB), a[i] > b[i] ? a[i] : b[i])                           \
  EW_KERNEL(S, argmax_step, select((REAL8)(alpha), VY, VA > VB), a[i] > b[i] ? y[i] : alpha)            \
  EW_KERNEL(S, mask_select, select((REAL8)(0), (REAL8)(0) + VB, VA == (REAL8)(alpha)),                  \
            a[i] == alpha ? 0 + b[i] : 0)                                                              \
  EW_KERNEL(S, positive_select, select(VY, VB, VA > (REAL8)(0)), a[i] > 0 ? b[i] : y[i])            \
  EW_KERNEL(S, sigmoid_cross_entropy, SIGMOID_CE8(VA, VB), SIGMOID_CE1(a[i], b[i]))                    \
  EW_KERNEL(S, zero_where_label, select(VY, (REAL8)(0), trunc(VA) == (REAL8)(alpha)),                 \
            trunc(a[i]) == alpha ? 0 : y[i])                                                           \
  EW_KERNEL(S, smooth_l1, SMOOTH_L1_8(VA), SMOOTH_L1_1(a[i]))                                          \
  EW_KERNEL(S, smooth_l1_backward, select(sign(VA), alpha * VA, fabs(VA) < (REAL8)((REAL)(1) / alpha)), \
            fabs(a[i]) < (REAL)(1) / alpha ? alpha * a[i] : sign(a[i]))

/* Fast R-CNN's SmoothL1Forward (alpha = sigma^2), in the element type (the .cu's pieces are in
 * double; they meet at the bound, so the two differ by the roundings only). */
#define SMOOTH_L1_8(v) \
  select(fabs(v) - (REAL8)((REAL)(0.5) / alpha), (REAL)(0.5) * (v) * (v) * alpha, fabs(v) < (REAL8)((REAL)(1) / alpha))
#define SMOOTH_L1_1(x) \
  (fabs(x) < (REAL)(1) / alpha ? (REAL)(0.5) * (x) * (x) * alpha : fabs(x) - (REAL)(0.5) / alpha)

/* SigmoidCrossEntropyLoss's forward kernel, in the element type as the .cu computes it. */
#define POSITIVE8(v) select((REAL8)(0), (REAL8)(1), (v) >= (REAL8)(0))
#define SIGMOID_CE8(v, t) ((v) * ((t) - POSITIVE8(v)) - log((REAL8)(1) + exp((v) - (REAL8)(2) * (v) * POSITIVE8(v))))
#define SIGMOID_CE1(x, t) \
  ((x) * ((t) - (REAL)((x) >= 0)) - log((REAL)(1) + exp((x) - (REAL)(2) * (x) * (REAL)((x) >= 0))))

/* Caffe's sigmoid is 0.5 * tanh(0.5 * x) + 0.5 in double (its 0.5 is a double constant),
 * also for float: so here where the device has fp64. */
#define REAL float
#define REAL8 float8
#define AS_BITS8 as_uint8
#define CONVERT8 convert_float8
#define SIGN_SHIFT 31
#ifdef HAVE_FP64
#define SIGMOID8(v) convert_float8(0.5 * tanh(0.5 * convert_double8(v)) + 0.5)
#define SIGMOID1(x) (float)(0.5 * tanh(0.5 * (double)(x)) + 0.5)
/* BNLL as Caffe's kernels compute it for float: exp in float, the 1. (a double) and what
 * follows in double. */
#define BNLL8(v)                                                                              \
  convert_float8(select(log(1.0 + convert_double8(exp(v))),                                   \
                        convert_double8(v) + log(1.0 + convert_double8(exp(-(v)))),           \
                        convert_long8((v) > (float8)(0))))
#define BNLL1(x) (float)((x) > 0 ? (x) + log(1.0 + (double)exp(-(x))) : log(1.0 + (double)exp(x)))
#define BNLL_BACKWARD8(v, d)                                                                  \
  convert_float8(convert_double8((d) * exp(fmin((v), (float8)(50)))) /                        \
                 (convert_double8(exp(fmin((v), (float8)(50)))) + 1.0))
#define BNLL_BACKWARD1(x, d) (float)((double)((d) * exp(fmin((x), 50.0f))) / ((double)exp(fmin((x), 50.0f)) + 1.0))
#else
#define SIGMOID8(v) (0.5f * tanh(0.5f * (v)) + 0.5f)
#define SIGMOID1(x) (0.5f * tanh(0.5f * (x)) + 0.5f)
#define BNLL8(v) select(log(1.0f + exp(v)), (v) + log(1.0f + exp(-(v))), (v) > (float8)(0))
#define BNLL1(x) ((x) > 0 ? (x) + log(1.0f + exp(-(x))) : log(1.0f + exp(x)))
#define BNLL_BACKWARD8(v, d) ((d) * exp(fmin((v), (float8)(50))) / (exp(fmin((v), (float8)(50))) + 1.0f))
#define BNLL_BACKWARD1(x, d) ((d) * exp(fmin((x), 50.0f)) / (exp(fmin((x), 50.0f)) + 1.0f))
#endif
EW_ALL(f)
#undef SIGMOID8
#undef SIGMOID1
#undef BNLL8
#undef BNLL1
#undef BNLL_BACKWARD8
#undef BNLL_BACKWARD1
#undef REAL
#undef REAL8
#undef AS_BITS8
#undef CONVERT8
#undef SIGN_SHIFT

#ifdef HAVE_FP64
#define REAL double
#define REAL8 double8
#define AS_BITS8 as_ulong8
#define CONVERT8 convert_double8
#define SIGN_SHIFT 63
#define SIGMOID8(v) (0.5 * tanh(0.5 * (v)) + 0.5)
#define SIGMOID1(x) (0.5 * tanh(0.5 * (x)) + 0.5)
#define BNLL8(v) select(log(1.0 + exp(v)), (v) + log(1.0 + exp(-(v))), (v) > (double8)(0))
#define BNLL1(x) ((x) > 0 ? (x) + log(1.0 + exp(-(x))) : log(1.0 + exp(x)))
#define BNLL_BACKWARD8(v, d) ((d) * exp(fmin((v), (double8)(50))) / (exp(fmin((v), (double8)(50))) + 1.0))
#define BNLL_BACKWARD1(x, d) ((d) * exp(fmin((x), 50.0)) / (exp(fmin((x), 50.0)) + 1.0))
EW_ALL(d)
#undef REAL
#undef REAL8
#endif
)CLC";
}

}  // namespace blobrt_opencl

#endif
