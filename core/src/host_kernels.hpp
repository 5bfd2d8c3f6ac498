// Plain, vectorisable level-1 kernels: the host device's implementation and the
// reference the conformance suite compares every backend with. Reductions accumulate
// in double (for float too), so the reference is at least as accurate as any backend.
#ifndef BLOBRT_HOST_KERNELS_HPP
#define BLOBRT_HOST_KERNELS_HPP

#include <cmath>
#include <cstdint>

namespace blobrt::host_kernels {

template <typename T>
void axpy(std::int64_t n, T alpha, const T* __restrict x, T* __restrict y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <typename T>
void scal(std::int64_t n, T alpha, T* x) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

template <typename T>
T dot(std::int64_t n, const T* x, const T* y) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * y[i];
  return static_cast<T>(sum);
}

template <typename T>
T asum(std::int64_t n, const T* x) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t i = 0; i < n; ++i) sum += std::fabs(static_cast<double>(x[i]));
  return static_cast<T>(sum);
}

}  // namespace blobrt::host_kernels

#endif  // BLOBRT_HOST_KERNELS_HPP
