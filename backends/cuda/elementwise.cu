// The CUDA plugin's element-wise entry point (plugin ABI 1.2): Caffe's caffe_gpu_set,
// add_scalar, scale, axpby, add, sub, mul, div, powx, sqr, sqrt, exp, log, abs, sign and
// sgnbit, one kernel per operation and precision (the operation is a template argument, so
// each kernel's loop holds only its own arithmetic), launched on the plugin's stream.
//
// Grid-stride loops over 16-byte packs (float4 / double2 loads and stores) when every
// operand the operation touches is 16-byte aligned (cudaMalloc's 256-byte alignment plus
// an offset that is a multiple of 4 floats / 2 doubles), else over single elements; the
// elements after the last whole pack are done one by one. The grid is 8 blocks of 256
// threads per multiprocessor at most (2048 resident threads each, the limit on sm_80/90),
// fewer for small n. y may be a or b exactly: each element is read before it is written.
#include <algorithm>
#include <cstdint>

#include "blobrt/plugin_abi.h"
#include "context.hpp"

namespace blobrt_cuda {

namespace {

__device__ __forceinline__ float pow_(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow_(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float sqrt_(float a) { return sqrtf(a); }
__device__ __forceinline__ double sqrt_(double a) { return sqrt(a); }
__device__ __forceinline__ float exp_(float a) { return expf(a); }
__device__ __forceinline__ double exp_(double a) { return exp(a); }
__device__ __forceinline__ float log_(float a) { return logf(a); }
__device__ __forceinline__ double log_(double a) { return log(a); }
__device__ __forceinline__ float abs_(float a) { return fabsf(a); }
__device__ __forceinline__ double abs_(double a) { return fabs(a); }

// Which operands operation Op reads (as blobrt_kernels::reads_a/_b/_y).
template <int Op>
constexpr bool kReadsA = Op != BLOBRT_EW_SET && Op != BLOBRT_EW_ADD_SCALAR;
template <int Op>
constexpr bool kReadsB = Op >= BLOBRT_EW_ADD && Op <= BLOBRT_EW_DIV;
template <int Op>
constexpr bool kReadsY = Op == BLOBRT_EW_ADD_SCALAR || Op == BLOBRT_EW_AXPBY;

template <int Op, typename T>
__device__ __forceinline__ T apply(T a, T b, T y, T alpha, T beta) {
  if constexpr (Op == BLOBRT_EW_SET) return alpha;
  else if constexpr (Op == BLOBRT_EW_ADD_SCALAR) return y + alpha;
  else if constexpr (Op == BLOBRT_EW_SCALE) return alpha * a;
  else if constexpr (Op == BLOBRT_EW_AXPBY) return alpha * a + beta * y;
  else if constexpr (Op == BLOBRT_EW_ADD) return a + b;
  else if constexpr (Op == BLOBRT_EW_SUB) return a - b;
  else if constexpr (Op == BLOBRT_EW_MUL) return a * b;
  else if constexpr (Op == BLOBRT_EW_DIV) return a / b;
  else if constexpr (Op == BLOBRT_EW_POWX) return pow_(a, alpha);
  else if constexpr (Op == BLOBRT_EW_SQR) return a * a;
  else if constexpr (Op == BLOBRT_EW_SQRT) return sqrt_(a);
  else if constexpr (Op == BLOBRT_EW_EXP) return exp_(a);
  else if constexpr (Op == BLOBRT_EW_LOG) return log_(a);
  else if constexpr (Op == BLOBRT_EW_ABS) return abs_(a);
  else if constexpr (Op == BLOBRT_EW_SIGN) return static_cast<T>((T(0) < a) - (a < T(0)));
  else return static_cast<T>(signbit(a) ? 1 : 0);  // BLOBRT_EW_SGNBIT
}

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
      for (int j = 0; j < P::kWidth; ++j) out.v[j] = apply<Op, T>(pa.v[j], pb.v[j], py.v[j], alpha, beta);
      reinterpret_cast<P*>(y)[i] = out;
    }
    done = packs * P::kWidth;
  }
  for (int64_t i = done + first; i < n; i += stride) {
    const T av = kReadsA<Op> ? a[i] : T(0);
    const T bv = kReadsB<Op> ? b[i] : T(0);
    const T yv = kReadsY<Op> ? y[i] : T(0);
    y[i] = apply<Op, T>(av, bv, yv, alpha, beta);
  }
}

bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <int Op, typename T>
void launch(Context* c, int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  // a and b may be y itself (Caffe's in-place calls), hence no __restrict__ above.
  const bool packed = aligned16(kReadsA<Op> ? a : nullptr) && aligned16(kReadsB<Op> ? b : nullptr) && aligned16(y);
  const int64_t work = packed ? (n + Pack<T>::kWidth - 1) / Pack<T>::kWidth : n;
  constexpr int kThreads = 256;
  const int64_t most = 8 * static_cast<int64_t>(c->multiprocessors);
  const int64_t blocks = std::min<int64_t>(most, (work + kThreads - 1) / kThreads);
  elementwise_kernel<Op, T><<<static_cast<unsigned>(blocks), kThreads, 0, c->stream>>>(n, alpha, beta, a, b, y, packed);
}

template <typename T>
void dispatch(Context* c, int op, int64_t n, T alpha, T beta, const T* a, const T* b, T* y) {
  switch (op) {
#define BLOBRT_EW_CASE(code) \
  case code: launch<code, T>(c, n, alpha, beta, a, b, y); break;
    BLOBRT_EW_CASE(BLOBRT_EW_SET)
    BLOBRT_EW_CASE(BLOBRT_EW_ADD_SCALAR)
    BLOBRT_EW_CASE(BLOBRT_EW_SCALE)
    BLOBRT_EW_CASE(BLOBRT_EW_AXPBY)
    BLOBRT_EW_CASE(BLOBRT_EW_ADD)
    BLOBRT_EW_CASE(BLOBRT_EW_SUB)
    BLOBRT_EW_CASE(BLOBRT_EW_MUL)
    BLOBRT_EW_CASE(BLOBRT_EW_DIV)
    BLOBRT_EW_CASE(BLOBRT_EW_POWX)
    BLOBRT_EW_CASE(BLOBRT_EW_SQR)
    BLOBRT_EW_CASE(BLOBRT_EW_SQRT)
    BLOBRT_EW_CASE(BLOBRT_EW_EXP)
    BLOBRT_EW_CASE(BLOBRT_EW_LOG)
    BLOBRT_EW_CASE(BLOBRT_EW_ABS)
    BLOBRT_EW_CASE(BLOBRT_EW_SIGN)
    BLOBRT_EW_CASE(BLOBRT_EW_SGNBIT)
#undef BLOBRT_EW_CASE
    default: break;  // checked by the caller
  }
}

bool reads_a(int op) { return op != BLOBRT_EW_SET && op != BLOBRT_EW_ADD_SCALAR; }
bool reads_b(int op) { return op >= BLOBRT_EW_ADD && op <= BLOBRT_EW_DIV; }

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
  if (precision == BLOBRT_FLOAT64) {
    dispatch<double>(c, op, n, alpha, beta, reads_a(op) ? at<double>(a, a_offset) : nullptr,
                     reads_b(op) ? at<double>(b, b_offset) : nullptr, at<double>(y, y_offset));
  } else {
    dispatch<float>(c, op, n, static_cast<float>(alpha), static_cast<float>(beta),
                    reads_a(op) ? at<float>(a, a_offset) : nullptr, reads_b(op) ? at<float>(b, b_offset) : nullptr,
                    at<float>(y, y_offset));
  }
  CUDA_CHECK(cudaGetLastError(), precision == BLOBRT_FLOAT64 ? "elementwise_kernel<double> launch"
                                                             : "elementwise_kernel<float> launch");
  return BLOBRT_OK;
}

}  // namespace blobrt_cuda
