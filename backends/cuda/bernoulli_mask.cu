// The CUDA plugin's bernoulli_mask (plugin ABI 1.10: the mask of Caffe's Dropout drawn on the
// device), a kernel of the plugin's own on the device's stream: one thread per block of four
// words of the Philox4x32-10 stream (grid-stride), writing the mask elements of the block's
// words that the call covers, as the host kernel (blobrt_kernels/bernoulli_mask.hpp) computes
// them: the same generator (32 x 32-bit products by __umulhi), so the same mask on every
// device. Not cuRAND's Philox generator, whose words are laid out per thread subsequence: the
// mask must not depend on the device. The core has checked the arguments and sends no call
// without output.
#include <cstdint>

#include "context.hpp"

namespace blobrt_cuda {

namespace {

constexpr int kThreads = 256;

// Block b of the stream keyed by (k0, k1): Philox4x32-10 of {b low, b high, 0, 0}.
__device__ __forceinline__ uint4 philox4x32_10(uint4 c, uint32_t k0, uint32_t k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint32_t hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
  }
  return c;
}

template <typename T>
__global__ void bernoulli_mask_kernel(uint64_t seed, uint64_t counter, uint64_t n, uint32_t threshold, T* mask) {
  const uint64_t end = counter + n, last_block = (end - 1) >> 2;
  const uint64_t step = static_cast<uint64_t>(blockDim.x) * gridDim.x;
  for (uint64_t block = (counter >> 2) + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       block <= last_block; block += step) {
    const uint4 w = philox4x32_10(make_uint4(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u),
                                  static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
    const uint64_t first = block << 2 > counter ? block << 2 : counter;
    const uint64_t stop = (block << 2) + 4 < end ? (block << 2) + 4 : end;
    for (uint64_t i = first; i < stop; ++i) mask[i - counter] = words[i & 3] > threshold ? T(1) : T(0);
  }
}

template <typename T>
void launch(Context* c, uint64_t seed, uint64_t counter, uint64_t n, uint32_t threshold, void* mask,
            int64_t mask_offset) {
  const auto blocks = static_cast<int64_t>(((counter + n - 1) >> 2) - (counter >> 2) + 1);
  bernoulli_mask_kernel<T><<<grid_blocks(c, blocks, kThreads), kThreads, 0, c->stream>>>(
      seed, counter, n, threshold, at<T>(mask, mask_offset));
}

}  // namespace

int bernoulli_mask(void* context, int32_t precision, int64_t n, int64_t seed, int64_t counter, int64_t threshold,
                   void* mask, int64_t mask_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (n == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  const auto s = static_cast<uint64_t>(seed), first = static_cast<uint64_t>(counter), count = static_cast<uint64_t>(n);
  const auto t = static_cast<uint32_t>(threshold);
  if (precision == BLOBRT_FLOAT64) {
    launch<double>(c, s, first, count, t, mask, mask_offset);
  } else {
    launch<float>(c, s, first, count, t, mask, mask_offset);
  }
  CUDA_CHECK(cudaGetLastError(), "bernoulli_mask_kernel launch");
  return BLOBRT_OK;
}

}  // namespace blobrt_cuda
