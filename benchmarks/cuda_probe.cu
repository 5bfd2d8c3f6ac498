// Plain streaming kernels (cuda_probe.hpp): grid-stride loops over 16-byte packs (one
// 128-bit load per operand and one store), 8 blocks of 256 threads per multiprocessor
// (2048 resident threads, enough bytes in flight to saturate HBM), the elements after the
// last whole pack by the first threads. Reductions: one partial per block, then one block
// adds the partials.
#include "cuda_probe.hpp"

namespace blobrt::bench::cuda_probe {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;

template <typename T>
struct alignas(16) Pack {
  static constexpr int kWidth = 16 / sizeof(T);
  T v[kWidth];
};

template <typename T>
__device__ T block_sum(T value, T* shared) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  value = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : T(0);
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

template <typename T>
__device__ void element(Kernel k, T a, const T* x, T* y, std::int64_t i, T& acc) {
  switch (k) {
    case Kernel::kFill: y[i] = a; break;
    case Kernel::kCopy: y[i] = x[i]; break;
    case Kernel::kScale: y[i] = a * y[i]; break;
    case Kernel::kTriad: y[i] = a * x[i] + y[i]; break;
    case Kernel::kSum: acc += x[i]; break;
    case Kernel::kDot: acc += x[i] * y[i]; break;
  }
}

// K is a template argument: each kernel holds only its own loads and arithmetic.
template <typename T, Kernel K>
__global__ void streaming(std::int64_t n, T a, const T* x, T* y, T* partials) {
  using P = Pack<T>;
  const std::int64_t packs = n / P::kWidth;
  const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const P* xp = reinterpret_cast<const P*>(x);
  P* yp = reinterpret_cast<P*>(y);
  T acc = 0;
  for (std::int64_t i = first; i < packs; i += stride) {
    P out;
    if (K == Kernel::kFill) {
      for (int l = 0; l < P::kWidth; ++l) out.v[l] = a;
      yp[i] = out;
    } else if (K == Kernel::kCopy) {
      yp[i] = xp[i];
    } else if (K == Kernel::kScale) {
      out = yp[i];
      for (int l = 0; l < P::kWidth; ++l) out.v[l] *= a;
      yp[i] = out;
    } else if (K == Kernel::kTriad) {
      const P in = xp[i];
      out = yp[i];
      for (int l = 0; l < P::kWidth; ++l) out.v[l] = a * in.v[l] + out.v[l];
      yp[i] = out;
    } else if (K == Kernel::kSum) {
      const P in = xp[i];
      for (int l = 0; l < P::kWidth; ++l) acc += in.v[l];
    } else {
      const P in = xp[i], other = yp[i];
      for (int l = 0; l < P::kWidth; ++l) acc += in.v[l] * other.v[l];
    }
  }
  const std::int64_t tail = packs * P::kWidth + first;
  if (tail < n) element<T>(K, a, x, y, tail, acc);
  if (K == Kernel::kSum || K == Kernel::kDot) {
    __shared__ T shared[kThreads / 32];
    const T total = block_sum(acc, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
  }
}

template <typename T>
__global__ void add_partials(int count, const T* partials, T* result) {
  __shared__ T shared[kThreads / 32];
  T acc = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
  const T total = block_sum(acc, shared);
  if (threadIdx.x == 0) *result = total;
}

int blocks_for(std::int64_t n, int width, int sm_count) {
  const std::int64_t packs = (n + width - 1) / width;
  const std::int64_t wanted = (packs + kThreads - 1) / kThreads;
  const std::int64_t most = std::int64_t(sm_count) * kBlocksPerSm;
  return static_cast<int>(wanted < 1 ? 1 : wanted < most ? wanted : most);
}

template <typename T, Kernel K>
cudaError_t run(std::int64_t n, void* x, void* y, void* scratch, int sm_count, cudaStream_t stream) {
  const int blocks = blocks_for(n, Pack<T>::kWidth, sm_count);
  T* partials = static_cast<T*>(scratch);
  const T a = K == Kernel::kScale ? T(-1) : T(0.999);  // -1: exact, never decays into denormals
  streaming<T, K><<<blocks, kThreads, 0, stream>>>(n, a, static_cast<const T*>(x), static_cast<T*>(y), partials);
  if (K == Kernel::kSum || K == Kernel::kDot) {
    add_partials<T><<<1, kThreads, 0, stream>>>(blocks, partials, partials + std::int64_t(sm_count) * kBlocksPerSm);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t dispatch(Kernel k, std::int64_t n, void* x, void* y, void* scratch, int sm_count, cudaStream_t s) {
  switch (k) {
    case Kernel::kFill: return run<T, Kernel::kFill>(n, x, y, scratch, sm_count, s);
    case Kernel::kCopy: return run<T, Kernel::kCopy>(n, x, y, scratch, sm_count, s);
    case Kernel::kScale: return run<T, Kernel::kScale>(n, x, y, scratch, sm_count, s);
    case Kernel::kTriad: return run<T, Kernel::kTriad>(n, x, y, scratch, sm_count, s);
    case Kernel::kSum: return run<T, Kernel::kSum>(n, x, y, scratch, sm_count, s);
    case Kernel::kDot: return run<T, Kernel::kDot>(n, x, y, scratch, sm_count, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

std::size_t scratch_bytes(int sm_count) { return (std::size_t(sm_count) * kBlocksPerSm + 1) * sizeof(double); }
std::size_t result_offset(int sm_count, std::size_t element_bytes) {
  return std::size_t(sm_count) * kBlocksPerSm * element_bytes;
}

cudaError_t launch(Kernel kernel, bool fp64, std::int64_t n, void* x, void* y, void* scratch, int sm_count,
                   cudaStream_t stream) {
  return fp64 ? dispatch<double>(kernel, n, x, y, scratch, sm_count, stream)
              : dispatch<float>(kernel, n, x, y, scratch, sm_count, stream);
}

}  // namespace blobrt::bench::cuda_probe
