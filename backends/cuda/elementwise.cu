// The CUDA plugin's element-wise entry point (plugin ABI 1.2): Caffe's caffe_gpu_set,
// add_scalar, scale, axpby, add, sub, mul, div, powx, sqr, sqrt, exp, log, abs, sign and
// sgnbit, and the neuron layers' relu, sigmoid, tanh and their backward codes, one kernel per operation and precision (the operation is a template argument, so
// each kernel's loop holds only its own arithmetic), launched on the plugin's stream.
//
// Grid-stride loops over 16-byte packs (float4 / double2 loads and stores) when every
// operand the operation touches is 16-byte aligned (cudaMalloc's 256-byte alignment plus
// an offset that is a multiple of 4 floats / 2 doubles), else over single elements; the
// elements after the last whole pack are done one by one. The grid is 8 blocks of 256
// threads per multiprocessor at most (2048 resident threads each, the limit on sm_80/90),
// fewer for small n. y may be a or b exactly: each element is read before it is written.
#include <cstdint>

#include "blobrt/plugin_abi.h"
#include "context.hpp"
#include "device_math.cuh"

namespace blobrt_cuda {

namespace {

// Which operands operation Op reads, from the list (blobrt/elementwise_operations.h).
#define BLOBRT_CUDA_EW_A_(CODE, Cxx, name, number, A, B, Y, ...) A,
#define BLOBRT_CUDA_EW_B_(CODE, Cxx, name, number, A, B, Y, ...) B,
#define BLOBRT_CUDA_EW_Y_(CODE, Cxx, name, number, A, B, Y, ...) Y,
#define BLOBRT_CUDA_EW_NAME_(CODE, Cxx, name, ...) #name,
constexpr bool kReadsATable[] = {BLOBRT_ELEMENTWISE_OPS(BLOBRT_CUDA_EW_A_)};
constexpr bool kReadsBTable[] = {BLOBRT_ELEMENTWISE_OPS(BLOBRT_CUDA_EW_B_)};
constexpr bool kReadsYTable[] = {BLOBRT_ELEMENTWISE_OPS(BLOBRT_CUDA_EW_Y_)};
const char* const kNames[] = {BLOBRT_ELEMENTWISE_OPS(BLOBRT_CUDA_EW_NAME_)};
#undef BLOBRT_CUDA_EW_A_
#undef BLOBRT_CUDA_EW_B_
#undef BLOBRT_CUDA_EW_Y_
#undef BLOBRT_CUDA_EW_NAME_
template <int Op>
constexpr bool kReadsA = kReadsATable[Op];
template <int Op>
constexpr bool kReadsB = kReadsBTable[Op];
template <int Op>
constexpr bool kReadsY = kReadsYTable[Op];

// This plugin's kernel for each code: Ew<Op>::apply, one specialisation per code it has
// (written by hand, as each backend's kernels are). A code of the list without one is
// answered BLOBRT_ERR_UNSUPPORTED, and the core runs its host kernel.
template <int Op>
struct Ew {
  static constexpr bool kHas = false;
};
#define BLOBRT_CUDA_EW_(CODE, EXPR)                                                               \
  template <>                                                                                     \
  struct Ew<BLOBRT_EW_##CODE> {                                                                   \
    static constexpr bool kHas = true;                                                            \
    template <typename T>                                                                         \
    __device__ __forceinline__ static T apply(T a, T b, T y, T alpha, T beta) {                   \
      (void)a, (void)b, (void)y, (void)alpha, (void)beta;                                         \
      return EXPR;                                                                                \
    }                                                                                             \
  };
BLOBRT_CUDA_EW_(SET, alpha)
BLOBRT_CUDA_EW_(ADD_SCALAR, y + alpha)
BLOBRT_CUDA_EW_(SCALE, alpha * a)
BLOBRT_CUDA_EW_(AXPBY, alpha * a + beta * y)
BLOBRT_CUDA_EW_(ADD, a + b)
BLOBRT_CUDA_EW_(SUB, a - b)
BLOBRT_CUDA_EW_(MUL, a * b)
BLOBRT_CUDA_EW_(DIV, a / b)
BLOBRT_CUDA_EW_(POWX, pow_(a, alpha))
BLOBRT_CUDA_EW_(SQR, a * a)
BLOBRT_CUDA_EW_(SQRT, sqrt_(a))
BLOBRT_CUDA_EW_(EXP, exp_(a))
BLOBRT_CUDA_EW_(LOG, log_(a))
BLOBRT_CUDA_EW_(ABS, abs_(a))
BLOBRT_CUDA_EW_(SIGN, static_cast<T>((T(0) < a) - (a < T(0))))
BLOBRT_CUDA_EW_(SGNBIT, static_cast<T>(signbit(a) ? 1 : 0))
BLOBRT_CUDA_EW_(RELU, a > T(0) ? a : a * alpha)
BLOBRT_CUDA_EW_(RELU_BACKWARD, b * (T(a > T(0)) + T(a <= T(0)) * alpha))
BLOBRT_CUDA_EW_(SIGMOID, static_cast<T>(0.5 * tanh(0.5 * static_cast<double>(a)) + 0.5))  // in double, as Caffe's
BLOBRT_CUDA_EW_(SIGMOID_BACKWARD, b * a * (T(1) - a))
BLOBRT_CUDA_EW_(TANH, tanh_(a))
BLOBRT_CUDA_EW_(TANH_BACKWARD, b * (T(1) - a * a))
BLOBRT_CUDA_EW_(ELU, a > T(0) ? a : alpha * (exp_(a) - T(1)))
BLOBRT_CUDA_EW_(ELU_BACKWARD, a > T(0) ? b : b * (a + alpha))
// BNLL in double, as Caffe's kernels (their 1. is a double)
BLOBRT_CUDA_EW_(BNLL, static_cast<T>(a > T(0) ? a + log(1. + exp_(-a)) : log(1. + exp_(a))))
BLOBRT_CUDA_EW_(BNLL_BACKWARD, static_cast<T>(b * exp_(fmin_(a, T(50))) / (exp_(fmin_(a, T(50))) + 1.)))
BLOBRT_CUDA_EW_(THRESHOLD, a > alpha ? T(1) : T(0))
BLOBRT_CUDA_EW_(CLIP, fmax_(alpha, fmin_(a, beta)))
BLOBRT_CUDA_EW_(CLIP_BACKWARD, b * T(a >= alpha && a <= beta))
BLOBRT_CUDA_EW_(MAX_STEP, a > b ? a : b)
BLOBRT_CUDA_EW_(ARGMAX_STEP, a > b ? y : alpha)
BLOBRT_CUDA_EW_(MASK_SELECT, a == alpha ? T(0) + b : T(0))
BLOBRT_CUDA_EW_(POSITIVE_SELECT, a > T(0) ? b : y)
BLOBRT_CUDA_EW_(SIGMOID_CROSS_ENTROPY, a * (b - T(a >= T(0))) - log_(T(1) + exp_(a - T(2) * a * T(a >= T(0)))))
BLOBRT_CUDA_EW_(ZERO_WHERE_LABEL, trunc(a) == alpha ? T(0) : y)
BLOBRT_CUDA_EW_(SMOOTH_L1, fabs(a) < 1.0 / alpha ? T(0.5 * a * a * alpha) : T(fabs(a) - 0.5 / alpha))
BLOBRT_CUDA_EW_(SMOOTH_L1_BACKWARD, fabs(a) < 1.0 / alpha ? alpha * a : T((T(0) < a) - (a < T(0))))
#undef BLOBRT_CUDA_EW_

// 16 bytes of T: one 128-bit load or store.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kWidth = 16 / sizeof(T);
  T v[kWidth];
};

template <int Op, typename T>
__global__ void elementwise_kernel(int64_t n, T alpha, T beta, const T* a, const T* b,
                                   T* y, bool packed) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (packed) {
    using P = Pack<T>;
    const int64_t packs = n / P::kWidth;
    for (int64_t i = first; i < packs; i += stride) {
      P pa{}, pb{}, py{};
      if constexpr (kReadsA<Op>) pa = reinterpret_cast<const P*>(a)[i];
      if constexpr (kReadsB<Op>) pb = reinterpret_cast<const P*>(b)[i];
      if constexpr (kReadsY<Op>) py = reinterpret_cast<const P*>(y)[i];
      P out;
#pragma unroll
      for (int j = 0; j < P::kWidth; ++j) out.v[j] = Ew<Op>::template apply<T>(pa.v[j], pb.v[j], py.v[j], alpha, beta);
      reinterpret_cast<P*>(y)[i] = out;
    }
    done = packs * P::kWidth;
  }
  for (int64_t i = done + first; i < n; i += stride) {
    const T av = kReadsA<Op> ? a[i] : T(0);
    const T bv = kReadsB<Op> ? b[i] : T(0);
    const T yv = kReadsY<Op> ? y[i] : T(0);
    y[i] = Ew<Op>::template apply<T>(av, bv, yv, alpha, beta);
  }
}

bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <int Op, typename T>
void launch(Context* c, int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  // a and b may be y itself (Caffe's in-place calls), hence no __restrict__ above.
  const bool packed = aligned16(kReadsA<Op> ? a : nullptr) && aligned16(kReadsB<Op> ? b : nullptr) && aligned16(y);
  const int64_t work = packed ? (n + Pack<T>::kWidth - 1) / Pack<T>::kWidth : n;
  constexpr int kThreads = 256;
  elementwise_kernel<Op, T><<<grid_blocks(c, work, kThreads), kThreads, 0, c->stream>>>(n, alpha, beta, a, b, y,
                                                                                        packed);
}

// Launches this plugin's kernel for `op`; false (nothing launched) where it has none.
template <int Op, typename T>
bool launch_if_present(Context* c, int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  if constexpr (Ew<Op>::kHas) {
    launch<Op, T>(c, n, alpha, beta, a, b, y);
    return true;
  } else {
    return false;
  }
}

// One case per code of the list: a code the list gains is never success untouched.
template <typename T>
bool dispatch(Context* c, int op, int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  switch (op) {
#define BLOBRT_CUDA_EW_CASE_(CODE, ...) \
  case BLOBRT_EW_##CODE: return launch_if_present<BLOBRT_EW_##CODE, T>(c, n, alpha, beta, a, b, y);
    BLOBRT_ELEMENTWISE_OPS(BLOBRT_CUDA_EW_CASE_)
#undef BLOBRT_CUDA_EW_CASE_
    default: return false;
  }
}

}  // namespace

int elementwise(void* context, int32_t precision, int32_t op, int64_t n, double alpha, double beta, const void* a,
                int64_t a_offset, const void* b, int64_t b_offset, void* y, int64_t y_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (op < 0 || op >= BLOBRT_EW_OP_COUNT) {
    // A code from a later ABI minor: the core runs it on the host.
    return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED,
                       "element-wise operation code %d is not one this plugin knows (codes below %d)",
                       static_cast<int>(op), static_cast<int>(BLOBRT_EW_OP_COUNT));
  }
  // The core has checked the rest (plugin_abi.h): a known precision, n > 0, no negative
  // offset, every operand the operation reads non-NULL.
  ON_DEVICE(c);
  const bool ra = kReadsATable[op], rb = kReadsBTable[op];
  const bool launched =
      precision == BLOBRT_FLOAT64
          ? dispatch<double>(c, op, n, alpha, beta, ra ? at<double>(a, a_offset) : nullptr,
                             rb ? at<double>(b, b_offset) : nullptr, at<double>(y, y_offset))
          : dispatch<float>(c, op, n, static_cast<float>(alpha), static_cast<float>(beta),
                            ra ? at<float>(a, a_offset) : nullptr, rb ? at<float>(b, b_offset) : nullptr,
                            at<float>(y, y_offset));
  if (!launched) {
    // A code of the list this plugin has no kernel for: the core runs it on the host.
    return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "element-wise %s (code %d): no CUDA kernel in this plugin",
                       kNames[op], static_cast<int>(op));
  }
  CUDA_CHECK(cudaGetLastError(), precision == BLOBRT_FLOAT64 ? "elementwise_kernel<double> launch"
                                                             : "elementwise_kernel<float> launch");
  return BLOBRT_OK;
}

}  // namespace blobrt_cuda
