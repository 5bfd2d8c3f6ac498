// The device-memory bandwidth probe of blobrt-bench-cuda: plain streaming kernels, one per
// access pattern of bench_common.hpp, that the CUDA device's operations are divided by
// (issue 27: "a plain streaming kernel and cudaMemcpy d2d"). No blobrt code: the ceiling
// is what the GPU's memory gives a kernel that does nothing else.
#ifndef BLOBRT_BENCH_CUDA_PROBE_HPP
#define BLOBRT_BENCH_CUDA_PROBE_HPP

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace blobrt::bench::cuda_probe {

// y = a (fill), y = x (copy), y = a y (scale), y = a x + y (triad), sum x, sum x y (dot).
enum class Kernel { kFill, kCopy, kScale, kTriad, kSum, kDot };

// Device scratch the reductions need (per-block partial sums and the result), and where in
// it sum and dot leave their result (an element of the kernel's type).
std::size_t scratch_bytes(int sm_count);
std::size_t result_offset(int sm_count, std::size_t element_bytes);

// Launches the kernel over n elements of float (fp64 false) or double on `stream`; x and y
// are device pointers, 16-byte aligned (cudaMalloc's are). Returns the launch's status; the caller synchronises.
cudaError_t launch(Kernel kernel, bool fp64, std::int64_t n, void* x, void* y, void* scratch, int sm_count,
                   cudaStream_t stream);

}  // namespace blobrt::bench::cuda_probe

#endif
