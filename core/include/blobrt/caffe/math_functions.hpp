// Caffe's caffe/util/math_functions.hpp on blobrt, both halves, with Caffe's signatures
// (part of <blobrt/caffe_compat.hpp>):
//  - caffe_cpu_* and caffe_* take host pointers and run on blobrt::host_math_device()
//    (BLIS where installed, else the host device's kernels);
//  - caffe_gpu_* take the handles gpu_data()/mutable_gpu_data() return and run on the
//    calling thread's current device (blobrt::current_device()). Handles of devices whose
//    memory is not host memory (a cl_mem) are not pointers: pass them as returned, never
//    offset (`gpu_data() + n` works only where handles are pointers: host, blis, CUDA);
//  - caffe_copy follows Caffe::mode(), as Caffe's: in GPU mode it copies as
//    caffe_gpu_memcpy (on the device when both are device buffers), else on the host.
// Every check Caffe makes with CHECK throws blobrt::Error naming the values.
#ifndef BLOBRT_CAFFE_MATH_FUNCTIONS_HPP
#define BLOBRT_CAFFE_MATH_FUNCTIONS_HPP

#include <boost/math/special_functions/next.hpp>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real.hpp>
#include <boost/random/variate_generator.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "blobrt/caffe/common.hpp"
#include "blobrt/device.hpp"
#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"

namespace caffe {

// CBLAS's transpose codes and values, in namespace caffe so that a <cblas.h> included as
// well does not clash (inside namespace caffe these are the ones found).
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };

namespace math_detail {

template <typename Dtype>
constexpr blobrt::Precision precision() {
  static_assert(std::is_same<Dtype, float>::value || std::is_same<Dtype, double>::value,
                "Caffe's math is instantiated for float and double");
  return std::is_same<Dtype, double>::value ? blobrt::Precision::kFloat64 : blobrt::Precision::kFloat32;
}

inline blobrt::Transpose transpose(CBLAS_TRANSPOSE t, const char* function) {
  if (t != CblasNoTrans && t != CblasTrans && t != CblasConjTrans) {
    blobrt::detail::fail(function, ": transpose code ", static_cast<int>(t), " is not CblasNoTrans/CblasTrans");
  }
  return t == CblasNoTrans ? blobrt::Transpose::kNo : blobrt::Transpose::kYes;  // real: ConjTrans = Trans
}

inline std::shared_ptr<blobrt::Device> cpu() { return blobrt::host_math_device(); }
inline const std::shared_ptr<blobrt::Device>& gpu() { return blobrt::current_device(); }

inline void check_n(const char* function, int n) {
  if (n < 0) blobrt::detail::fail(function, ": n is ", n, " (must be >= 0)");
}

template <typename Dtype>
void elementwise(blobrt::Device& device, const char* function, blobrt::ElementwiseOp op, int n, double alpha,
                 double beta, const Dtype* a, const Dtype* b, Dtype* y) {
  check_n(function, n);
  if (n == 0) return;
  device.elementwise(precision<Dtype>(), op, n, alpha, beta, a, 0, b, 0, y, 0);
}

template <typename Dtype>
void gemm(blobrt::Device& device, const char* function, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          Dtype alpha, const Dtype* a, const Dtype* b, Dtype beta, Dtype* c) {
  if (m < 0 || n < 0 || k < 0) blobrt::detail::fail(function, ": M=", m, " N=", n, " K=", k, " (must be >= 0)");
  device.gemm(precision<Dtype>(), transpose(ta, function), transpose(tb, function), m, n, k, alpha, a, 0, b, 0, beta,
              c, 0);
}

template <typename Dtype>
void gemv(blobrt::Device& device, const char* function, CBLAS_TRANSPOSE ta, int m, int n, Dtype alpha, const Dtype* a,
          const Dtype* x, Dtype beta, Dtype* y) {
  if (m < 0 || n < 0) blobrt::detail::fail(function, ": M=", m, " N=", n, " (must be >= 0)");
  device.gemv(precision<Dtype>(), transpose(ta, function), m, n, alpha, a, 0, x, 0, beta, y, 0);
}

}  // namespace math_detail

// ---------------------------------------------------------------- host half

// C = alpha * op(A) * op(B) + beta * C, row-major, op(A) M x K, op(B) K x N.
template <typename Dtype>
void caffe_cpu_gemm(const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB, const int M, const int N,
                    const int K, const Dtype alpha, const Dtype* A, const Dtype* B, const Dtype beta, Dtype* C) {
  math_detail::gemm(*math_detail::cpu(), "caffe_cpu_gemm", TransA, TransB, M, N, K, alpha, A, B, beta, C);
}

// y = alpha * op(A) * x + beta * y, A M x N.
template <typename Dtype>
void caffe_cpu_gemv(const CBLAS_TRANSPOSE TransA, const int M, const int N, const Dtype alpha, const Dtype* A,
                    const Dtype* x, const Dtype beta, Dtype* y) {
  math_detail::gemv(*math_detail::cpu(), "caffe_cpu_gemv", TransA, M, N, alpha, A, x, beta, y);
}

template <typename Dtype>
void caffe_axpy(const int N, const Dtype alpha, const Dtype* X, Dtype* Y) {
  math_detail::check_n("caffe_axpy", N);
  math_detail::cpu()->axpy(N, alpha, X, 0, Y, 0);
}

// Y = alpha * X + beta * Y
template <typename Dtype>
void caffe_cpu_axpby(const int N, const Dtype alpha, const Dtype* X, const Dtype beta, Dtype* Y) {
  math_detail::elementwise<Dtype>(*math_detail::cpu(), "caffe_cpu_axpby", blobrt::ElementwiseOp::kAxpby, N, alpha,
                                  beta, X, nullptr, Y);
}

inline void caffe_gpu_memcpy(const std::size_t N, const void* X, void* Y);

// Caffe's: in GPU mode a copy in whichever direction the two make (cudaMemcpyDefault:
// on the device when both are device buffers), else a host memcpy. Any element type.
template <typename Dtype>
void caffe_copy(const int N, const Dtype* X, Dtype* Y) {
  math_detail::check_n("caffe_copy", N);
  if (X == Y || N == 0) return;
  const std::size_t bytes = sizeof(Dtype) * static_cast<std::size_t>(N);
  if (Caffe::mode() == Caffe::GPU) {
    caffe_gpu_memcpy(bytes, X, Y);
  } else {
    std::memcpy(Y, X, bytes);
  }
}

template <typename Dtype>
void caffe_set(const int N, const Dtype alpha, Dtype* Y) {
  math_detail::check_n("caffe_set", N);
  if (N == 0) return;
  if (alpha == 0) {
    std::memset(Y, 0, sizeof(Dtype) * static_cast<std::size_t>(N));
  } else if constexpr (std::is_floating_point<Dtype>::value) {
    math_detail::elementwise<Dtype>(*math_detail::cpu(), "caffe_set", blobrt::ElementwiseOp::kSet, N, alpha, 0,
                                    nullptr, nullptr, Y);
  } else {
    for (int i = 0; i < N; ++i) Y[i] = alpha;
  }
}

inline void caffe_memset(const std::size_t N, const int alpha, void* X) { std::memset(X, alpha, N); }

template <typename Dtype>
void caffe_add_scalar(const int N, const Dtype alpha, Dtype* X) {
  math_detail::elementwise<Dtype>(*math_detail::cpu(), "caffe_add_scalar", blobrt::ElementwiseOp::kAddScalar, N,
                                  alpha, 0, nullptr, nullptr, X);
}

template <typename Dtype>
void caffe_scal(const int N, const Dtype alpha, Dtype* X) {
  math_detail::check_n("caffe_scal", N);
  math_detail::cpu()->scal(N, alpha, X, 0);
}

#define BLOBRT_CAFFE_UNARY(name, op)                                                                          \
  template <typename Dtype>                                                                                   \
  void name(const int N, const Dtype* a, Dtype* y) {                                                          \
    math_detail::elementwise<Dtype>(*math_detail::cpu(), #name, blobrt::ElementwiseOp::op, N, 0, 0, a, nullptr, y); \
  }
#define BLOBRT_CAFFE_BINARY(name, op)                                                                         \
  template <typename Dtype>                                                                                   \
  void name(const int N, const Dtype* a, const Dtype* b, Dtype* y) {                                          \
    math_detail::elementwise<Dtype>(*math_detail::cpu(), #name, blobrt::ElementwiseOp::op, N, 0, 0, a, b, y); \
  }
BLOBRT_CAFFE_UNARY(caffe_sqr, kSqr)
BLOBRT_CAFFE_UNARY(caffe_sqrt, kSqrt)
BLOBRT_CAFFE_UNARY(caffe_exp, kExp)
BLOBRT_CAFFE_UNARY(caffe_log, kLog)
BLOBRT_CAFFE_UNARY(caffe_abs, kAbs)
BLOBRT_CAFFE_BINARY(caffe_add, kAdd)
BLOBRT_CAFFE_BINARY(caffe_sub, kSub)
BLOBRT_CAFFE_BINARY(caffe_mul, kMul)
BLOBRT_CAFFE_BINARY(caffe_div, kDiv)
#undef BLOBRT_CAFFE_UNARY
#undef BLOBRT_CAFFE_BINARY

// y = a ^ b
template <typename Dtype>
void caffe_powx(const int n, const Dtype* a, const Dtype b, Dtype* y) {
  math_detail::elementwise<Dtype>(*math_detail::cpu(), "caffe_powx", blobrt::ElementwiseOp::kPowx, n, b, 0, a,
                                  nullptr, y);
}

// ---- random numbers: Caffe's generator (caffe_rng()) through Boost.Random, as Caffe ----
inline unsigned int caffe_rng_rand() { return (*caffe_rng())(); }

template <typename Dtype>
Dtype caffe_nextafter(const Dtype b) {
  return boost::math::nextafter<Dtype>(b, std::numeric_limits<Dtype>::max());
}

// Uniform on [a, b] (Caffe widens b by one ulp for boost's half-open range).
template <typename Dtype>
void caffe_rng_uniform(const int n, const Dtype a, const Dtype b, Dtype* r) {
  if (n < 0 || !r || !(a <= b)) {
    blobrt::detail::fail("caffe_rng_uniform: n ", n, ", r ", static_cast<const void*>(r), ", range [", a, ", ", b,
                         "] (needs n >= 0, r, a <= b)");
  }
  boost::uniform_real<Dtype> distribution(a, caffe_nextafter<Dtype>(b));
  boost::variate_generator<rng_t*, boost::uniform_real<Dtype> > draw(caffe_rng(), distribution);
  for (int i = 0; i < n; ++i) r[i] = draw();
}

template <typename Dtype>
void caffe_rng_gaussian(const int n, const Dtype mu, const Dtype sigma, Dtype* r) {
  if (n < 0 || !r || !(sigma > 0)) {
    blobrt::detail::fail("caffe_rng_gaussian: n ", n, ", r ", static_cast<const void*>(r), ", sigma ", sigma,
                         " (needs n >= 0, r, sigma > 0)");
  }
  boost::normal_distribution<Dtype> distribution(mu, sigma);
  boost::variate_generator<rng_t*, boost::normal_distribution<Dtype> > draw(caffe_rng(), distribution);
  for (int i = 0; i < n; ++i) r[i] = draw();
}

namespace math_detail {
template <typename Dtype, typename Int>
void bernoulli(const int n, const Dtype p, Int* r) {
  if (n < 0 || !r || !(p >= 0) || !(p <= 1)) {
    blobrt::detail::fail("caffe_rng_bernoulli: n ", n, ", r ", static_cast<const void*>(r), ", p ", p,
                         " (needs n >= 0, r, 0 <= p <= 1)");
  }
  boost::bernoulli_distribution<Dtype> distribution(p);
  boost::variate_generator<rng_t*, boost::bernoulli_distribution<Dtype> > draw(caffe_rng(), distribution);
  for (int i = 0; i < n; ++i) r[i] = static_cast<Int>(draw());
}
}  // namespace math_detail

template <typename Dtype>
void caffe_rng_bernoulli(const int n, const Dtype p, int* r) {
  math_detail::bernoulli(n, p, r);
}
template <typename Dtype>
void caffe_rng_bernoulli(const int n, const Dtype p, unsigned int* r) {
  math_detail::bernoulli(n, p, r);
}

// ---- reductions ----
template <typename Dtype>
Dtype caffe_cpu_dot(const int n, const Dtype* x, const Dtype* y) {
  math_detail::check_n("caffe_cpu_dot", n);
  Dtype result = 0;
  math_detail::cpu()->dot(n, x, 0, y, 0, &result);
  return result;
}

// BLAS's strided dot (a negative increment walks from the far end, as cblas_?dot): the
// strided elements are gathered and dotted by the same BLAS.
template <typename Dtype>
Dtype caffe_cpu_strided_dot(const int n, const Dtype* x, const int incx, const Dtype* y, const int incy) {
  math_detail::check_n("caffe_cpu_strided_dot", n);
  if (incx == 0 || incy == 0) {
    Dtype result = 0;  // BLAS's meaning of a zero increment: the same element n times
    for (int i = 0; i < n; ++i) result += x[0] * y[0];
    return result;
  }
  if (incx == 1 && incy == 1) return caffe_cpu_dot(n, x, y);
  auto gather = [n](const Dtype* v, int inc) {
    std::vector<Dtype> out(static_cast<std::size_t>(n));
    const std::int64_t step = inc < 0 ? -static_cast<std::int64_t>(inc) : inc;
    for (int i = 0; i < n; ++i) out[i] = v[(inc > 0 ? i : n - 1 - i) * step];
    return out;
  };
  const std::vector<Dtype> gx = gather(x, incx), gy = gather(y, incy);
  return caffe_cpu_dot(n, gx.data(), gy.data());
}

template <typename Dtype>
Dtype caffe_cpu_asum(const int n, const Dtype* x) {
  math_detail::check_n("caffe_cpu_asum", n);
  Dtype result = 0;
  math_detail::cpu()->asum(n, x, 0, &result);
  return result;
}

template <typename Dtype>
inline std::int8_t caffe_sign(Dtype val) {
  return (Dtype(0) < val) - (val < Dtype(0));
}

// Caffe's DEFINE_CAFFE_CPU_UNARY_FUNC ones: CHECK_GT(n, 0), CHECK(x), CHECK(y).
#define BLOBRT_CAFFE_CHECKED_UNARY(name, op)                                                                      \
  template <typename Dtype>                                                                                       \
  void name(const int n, const Dtype* x, Dtype* y) {                                                              \
    if (n <= 0 || !x || !y) {                                                                                     \
      blobrt::detail::fail(#name ": n ", n, ", x ", static_cast<const void*>(x), ", y ", static_cast<void*>(y),   \
                           " (needs n > 0, x, y)");                                                               \
    }                                                                                                             \
    math_detail::elementwise<Dtype>(*math_detail::cpu(), #name, blobrt::ElementwiseOp::op, n, 0, 0, x, nullptr, y); \
  }
BLOBRT_CAFFE_CHECKED_UNARY(caffe_cpu_sign, kSign)
BLOBRT_CAFFE_CHECKED_UNARY(caffe_cpu_sgnbit, kSgnbit)
BLOBRT_CAFFE_CHECKED_UNARY(caffe_cpu_fabs, kAbs)
#undef BLOBRT_CAFFE_CHECKED_UNARY

// y = alpha * x
template <typename Dtype>
void caffe_cpu_scale(const int n, const Dtype alpha, const Dtype* x, Dtype* y) {
  math_detail::elementwise<Dtype>(*math_detail::cpu(), "caffe_cpu_scale", blobrt::ElementwiseOp::kScale, n, alpha, 0,
                                  x, nullptr, y);
}

// ---------------------------------------------------------------- device half

template <typename Dtype>
void caffe_gpu_gemm(const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB, const int M, const int N,
                    const int K, const Dtype alpha, const Dtype* A, const Dtype* B, const Dtype beta, Dtype* C) {
  math_detail::gemm(*math_detail::gpu(), "caffe_gpu_gemm", TransA, TransB, M, N, K, alpha, A, B, beta, C);
}

template <typename Dtype>
void caffe_gpu_gemv(const CBLAS_TRANSPOSE TransA, const int M, const int N, const Dtype alpha, const Dtype* A,
                    const Dtype* x, const Dtype beta, Dtype* y) {
  math_detail::gemv(*math_detail::gpu(), "caffe_gpu_gemv", TransA, M, N, alpha, A, x, beta, y);
}

template <typename Dtype>
void caffe_gpu_axpy(const int N, const Dtype alpha, const Dtype* X, Dtype* Y) {
  math_detail::check_n("caffe_gpu_axpy", N);
  math_detail::gpu()->axpy(N, alpha, X, 0, Y, 0);
}

template <typename Dtype>
void caffe_gpu_axpby(const int N, const Dtype alpha, const Dtype* X, const Dtype beta, Dtype* Y) {
  math_detail::elementwise<Dtype>(*math_detail::gpu(), "caffe_gpu_axpby", blobrt::ElementwiseOp::kAxpby, N, alpha,
                                  beta, X, nullptr, Y);
}

// Copies N bytes in whichever direction X and Y make, as Caffe's (cudaMemcpyDefault): each
// is a buffer of the thread's current device (as gpu_data() or Device::allocate returned
// it, not offset) or host memory. On devices whose memory is host memory it is a memcpy.
inline void caffe_gpu_memcpy(const std::size_t N, const void* X, void* Y) {
  if (X == Y || N == 0) return;
  blobrt::Device& device = *blobrt::current_device();
  if (device.description().memory_model == blobrt::MemoryModel::kShared) {
    std::memcpy(Y, X, N);
    return;
  }
  const bool from_device = device.is_buffer(X), to_device = device.is_buffer(Y);
  if (from_device && to_device) {
    device.copy_device(X, 0, Y, 0, N);
  } else if (from_device) {
    device.copy_to_host(X, 0, Y, N);
  } else if (to_device) {
    device.copy_to_device(X, Y, 0, N);
  } else {
    std::memcpy(Y, X, N);
  }
}

template <typename Dtype>
void caffe_gpu_set(const int N, const Dtype alpha, Dtype* Y) {
  math_detail::check_n("caffe_gpu_set", N);
  if (N == 0) return;
  if constexpr (std::is_floating_point<Dtype>::value) {
    math_detail::elementwise<Dtype>(*math_detail::gpu(), "caffe_gpu_set", blobrt::ElementwiseOp::kSet, N, alpha, 0,
                                    nullptr, nullptr, Y);
  } else {  // int (Caffe instantiates it): zero by memset, other values by one upload
    blobrt::Device& device = *math_detail::gpu();
    const std::size_t bytes = sizeof(Dtype) * static_cast<std::size_t>(N);
    if (alpha == 0) {
      device.memset(Y, 0, 0, bytes);
    } else {
      const std::vector<Dtype> values(static_cast<std::size_t>(N), alpha);
      device.copy_to_device(values.data(), Y, 0, bytes);
    }
  }
}

inline void caffe_gpu_memset(const std::size_t N, const int alpha, void* X) {
  if (N > 0) blobrt::current_device()->memset(X, 0, alpha, N);
}

template <typename Dtype>
void caffe_gpu_add_scalar(const int N, const Dtype alpha, Dtype* X) {
  math_detail::elementwise<Dtype>(*math_detail::gpu(), "caffe_gpu_add_scalar", blobrt::ElementwiseOp::kAddScalar, N,
                                  alpha, 0, nullptr, nullptr, X);
}

template <typename Dtype>
void caffe_gpu_scal(const int N, const Dtype alpha, Dtype* X) {
  math_detail::check_n("caffe_gpu_scal", N);
  math_detail::gpu()->scal(N, alpha, X, 0);
}

#define BLOBRT_CAFFE_GPU_UNARY(name, op)                                                                      \
  template <typename Dtype>                                                                                   \
  void name(const int N, const Dtype* a, Dtype* y) {                                                          \
    math_detail::elementwise<Dtype>(*math_detail::gpu(), #name, blobrt::ElementwiseOp::op, N, 0, 0, a, nullptr, y); \
  }
#define BLOBRT_CAFFE_GPU_BINARY(name, op)                                                                     \
  template <typename Dtype>                                                                                   \
  void name(const int N, const Dtype* a, const Dtype* b, Dtype* y) {                                          \
    math_detail::elementwise<Dtype>(*math_detail::gpu(), #name, blobrt::ElementwiseOp::op, N, 0, 0, a, b, y); \
  }
BLOBRT_CAFFE_GPU_BINARY(caffe_gpu_add, kAdd)
BLOBRT_CAFFE_GPU_BINARY(caffe_gpu_sub, kSub)
BLOBRT_CAFFE_GPU_BINARY(caffe_gpu_mul, kMul)
BLOBRT_CAFFE_GPU_BINARY(caffe_gpu_div, kDiv)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_abs, kAbs)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_exp, kExp)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_log, kLog)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_sqrt, kSqrt)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_sign, kSign)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_sgnbit, kSgnbit)
BLOBRT_CAFFE_GPU_UNARY(caffe_gpu_fabs, kAbs)
#undef BLOBRT_CAFFE_GPU_UNARY
#undef BLOBRT_CAFFE_GPU_BINARY

template <typename Dtype>
void caffe_gpu_powx(const int N, const Dtype* a, const Dtype alpha, Dtype* y) {
  math_detail::elementwise<Dtype>(*math_detail::gpu(), "caffe_gpu_powx", blobrt::ElementwiseOp::kPowx, N, alpha, 0, a,
                                  nullptr, y);
}

template <typename Dtype>
void caffe_gpu_dot(const int n, const Dtype* x, const Dtype* y, Dtype* out) {
  math_detail::check_n("caffe_gpu_dot", n);
  *out = 0;
  math_detail::gpu()->dot(n, x, 0, y, 0, out);
}

template <typename Dtype>
void caffe_gpu_asum(const int n, const Dtype* x, Dtype* y) {
  math_detail::check_n("caffe_gpu_asum", n);
  *y = 0;
  math_detail::gpu()->asum(n, x, 0, y);
}

// y = alpha * x
template <typename Dtype>
void caffe_gpu_scale(const int n, const Dtype alpha, const Dtype* x, Dtype* y) {
  math_detail::elementwise<Dtype>(*math_detail::gpu(), "caffe_gpu_scale", blobrt::ElementwiseOp::kScale, n, alpha, 0,
                                  x, nullptr, y);
}

// ---- device random numbers: Caffe draws them with cuRAND; blobrt draws Caffe's host
// sequence (the same generator as caffe_rng_*) and uploads it, so they are reproducible
// on every backend (docs/differences-from-caffe.md) ----
namespace math_detail {
template <typename T, typename Draw>
void upload_drawn(const char* function, int n, T* r, Draw draw) {
  check_n(function, n);
  if (n == 0) return;
  std::vector<T> values(static_cast<std::size_t>(n));
  draw(values.data());
  gpu()->copy_to_device(values.data(), r, 0, sizeof(T) * values.size());
}
}  // namespace math_detail

// n 32-bit random integers (Caffe: curandGenerate).
inline void caffe_gpu_rng_uniform(const int n, unsigned int* r) {
  math_detail::upload_drawn("caffe_gpu_rng_uniform", n, r, [n](unsigned int* v) {
    rng_t& rng = *caffe_rng();  // once: finding the thread's generator costs more than a draw
    for (int i = 0; i < n; ++i) v[i] = rng();
  });
}

template <typename Dtype>
void caffe_gpu_rng_uniform(const int n, const Dtype a, const Dtype b, Dtype* r) {
  if (!(a <= b)) blobrt::detail::fail("caffe_gpu_rng_uniform: range [", a, ", ", b, "] (needs a <= b)");
  math_detail::upload_drawn("caffe_gpu_rng_uniform", n, r, [&](Dtype* v) { caffe_rng_uniform(n, a, b, v); });
}

template <typename Dtype>
void caffe_gpu_rng_gaussian(const int n, const Dtype mu, const Dtype sigma, Dtype* r) {
  if (!(sigma > 0)) blobrt::detail::fail("caffe_gpu_rng_gaussian: sigma ", sigma, " (needs sigma > 0)");
  math_detail::upload_drawn("caffe_gpu_rng_gaussian", n, r, [&](Dtype* v) { caffe_rng_gaussian(n, mu, sigma, v); });
}

template <typename Dtype>
void caffe_gpu_rng_bernoulli(const int n, const Dtype p, int* r) {
  if (!(p >= 0) || !(p <= 1)) blobrt::detail::fail("caffe_gpu_rng_bernoulli: p ", p, " (needs 0 <= p <= 1)");
  math_detail::upload_drawn("caffe_gpu_rng_bernoulli", n, r, [&](int* v) { caffe_rng_bernoulli(n, p, v); });
}

}  // namespace caffe

#endif  // BLOBRT_CAFFE_MATH_FUNCTIONS_HPP
