// The CUDA ordering contract (docs/cuda.md): Blob operations on the cuda backend order
// with a user's kernels on the legacy default stream (stream 0) both ways, as Caffe's did.
// Skipped, with the reason, where no CUDA device is usable (CI has no GPU); run on a GPU
// node by the GPU bundle. Also: the CUDA plugin gives the caller its CUDA device back.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"

namespace {

// Spins for about `cycles` clock cycles, then writes value everywhere: a kernel that is
// still running when the host returns from its launch.
__global__ void slow_fill(float* p, long long n, float value, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = value;
}

__global__ void copy(const float* in, float* out, long long n) {
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i];
}

class CudaOrderingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      blobrt::select_backend("cuda");
    } catch (const blobrt::Error& e) {
      GTEST_SKIP() << "no usable CUDA device: " << e.what();
    }
  }
};

// A kernel on stream 0 that writes a blob's device memory, then a Blob reduction with no
// synchronisation in between: the reduction must see the kernel's values.
TEST_F(CudaOrderingTest, UserKernelOnStreamZeroCompletesBeforeABlobOperation) {
  const int n = 1 << 20;
  blobrt::Blob<float> blob(std::vector<int>{n});
  float* data = blob.mutable_gpu_data();
  ASSERT_EQ(cudaMemset(data, 0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  slow_fill<<<64, 256>>>(data, n, 1.0f, 200000000LL);  // about 0.1 s
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FLOAT_EQ(blob.asum_data(), static_cast<float>(n));
}

// A Blob operation, then a kernel on stream 0 reading its result: the kernel must see it.
TEST_F(CudaOrderingTest, BlobOperationCompletesBeforeAUserKernelOnStreamZero) {
  const int n = 1 << 26;
  blobrt::Blob<float> blob(std::vector<int>{n});
  float* host = blob.mutable_cpu_data();
  for (int i = 0; i < n; ++i) host[i] = 1.0f;
  const float* data = blob.gpu_data();
  blob.scale_data(3.0f);  // on the device: the head is synced
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  copy<<<1024, 256>>>(data, out, n);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> back(n);
  ASSERT_EQ(cudaMemcpy(back.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  long long wrong = 0;
  for (float v : back) wrong += v != 3.0f;
  EXPECT_EQ(wrong, 0) << "elements the kernel read before the Blob operation finished";
}

// The CUDA plugin works on its own device and gives the caller's current device back
// (as c10's device guard): a thread that set device 1 and used cuda:0 through blobrt is
// still on device 1. Needs two CUDA devices; skipped with the count otherwise.
TEST(CudaDeviceRestore, PluginCallsLeaveTheCallersDeviceAsItWas) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    GTEST_SKIP() << "needs two CUDA devices, found " << count;
  }
  for (int mine : {1, 0}) {
    const int other = 1 - mine;
    ASSERT_EQ(cudaSetDevice(mine), cudaSuccess);
    std::shared_ptr<blobrt::Device> device = blobrt::open_device("cuda:" + std::to_string(other));
    blobrt::DeviceBuffer buffer = device->allocate(1024 * sizeof(float));
    const std::vector<float> ones(1024, 1.0f);
    device->copy_to_device(ones.data(), buffer, 0, 1024 * sizeof(float));
    device->scal(1024, 2.0f, buffer, 0);
    float sum = -1;
    device->asum(1024, buffer, 0, &sum);
    device->synchronize();
    device->release(buffer);
    EXPECT_EQ(sum, 2048.0f);
    int now = -1;
    ASSERT_EQ(cudaGetDevice(&now), cudaSuccess);
    EXPECT_EQ(now, mine) << "the caller was on device " << mine << " and used cuda:" << other;
  }
}

}  // namespace
