// The CUDA plugin's level-1 paths (backends/cuda/level1.cu): axpy, scal and asum on the
// plugin's own kernels or cuBLAS's, chosen by BLOBRT_CUDA_LEVEL1 (auto, cublas, own). Each
// mode runs in a process of its own (a death test's child, which opens cuda:0 afresh with
// the variable set), over sizes around the 16-byte packs and the grid, at aligned and
// unaligned offsets, against the same sums on the host; cublas mode must give cuBLAS's own
// bits. Skipped, with the reason, where no CUDA device is usable (CI has no GPU).
#include <gtest/gtest.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "blobrt/device.hpp"
#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"

namespace {

// Asked of the CUDA runtime, not of blobrt: the parent must not open cuda:0, whose mode
// would then be the one each child (which runs this too) gets.
std::string cuda_unusable() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status);
  return count > 0 ? "" : "cudaGetDeviceCount found no CUDA device";
}

// Values of both signs and several magnitudes, none zero.
template <typename T>
std::vector<T> pattern(int64_t n, int seed) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(((i * 7919 + seed) % 2001) - 1000) / T(37) + T(0.001);
  return v;
}

// Exits 0 when axpy, scal and asum on cuda:0 agree with the host everywhere; prints what
// differs and exits 1 otherwise. Runs in the death test's child.
template <typename T>
int check_against_host() {
  std::shared_ptr<blobrt::Device> device = blobrt::open_device("cuda:0");
  const T tolerance = sizeof(T) == 8 ? T(1e-12) : T(1e-5);
  int failures = 0;
  // Around a 16-byte pack, a block, the grid of 8 blocks x 132 SMs and past it.
  for (int64_t n : {1, 3, 4, 5, 255, 257, 1000, 8 * 256 * 132 * 4 + 3, (1 << 22) + 1}) {
    for (int64_t offset : {0, 1}) {
      const std::vector<T> x = pattern<T>(n + offset, 1), y = pattern<T>(n + offset, 2);
      const size_t bytes = (n + offset) * sizeof(T);
      blobrt::DeviceBuffer dx = device->allocate(bytes), dy = device->allocate(bytes);
      device->copy_to_device(x.data(), dx, 0, bytes);
      device->copy_to_device(y.data(), dy, 0, bytes);
      T sum = -1;
      device->asum(n, dx, offset, &sum);
      double expected = 0;
      for (int64_t i = offset; i < n + offset; ++i) expected += std::fabs(static_cast<double>(x[i]));
      if (std::fabs(sum - expected) > tolerance * expected) {
        std::fprintf(stderr, "asum n=%lld offset=%lld: %.17g, host %.17g\n", static_cast<long long>(n),
                     static_cast<long long>(offset), static_cast<double>(sum), expected);
        ++failures;
      }
      device->axpy(n, T(-1.5), dx, offset, dy, offset);
      device->scal(n, T(0.25), dx, offset);
      std::vector<T> back_x(n + offset), back_y(n + offset);
      device->copy_to_host(dx, 0, back_x.data(), bytes);
      device->copy_to_host(dy, 0, back_y.data(), bytes);
      int64_t wrong = 0;
      for (int64_t i = 0; i < n + offset; ++i) {
        const bool inside = i >= offset;
        const T want_y = inside ? T(-1.5) * x[i] + y[i] : y[i];  // outside: untouched
        const T want_x = inside ? T(0.25) * x[i] : x[i];
        if (std::fabs(back_y[i] - want_y) > tolerance * (std::fabs(want_y) + 1) || back_x[i] != want_x) ++wrong;
      }
      if (wrong) {
        std::fprintf(stderr, "axpy/scal n=%lld offset=%lld: %lld elements differ\n", static_cast<long long>(n),
                     static_cast<long long>(offset), static_cast<long long>(wrong));
        ++failures;
      }
      device->release(dx);
      device->release(dy);
    }
  }
  return failures == 0 ? 0 : 1;
}

// cublas mode gives cuBLAS's own result, bit for bit, for float asum (the plugin's kernel
// in auto mode).
int check_cublas_bits() {
  std::shared_ptr<blobrt::Device> device = blobrt::open_device("cuda:0");
  const int64_t n = (1 << 20) + 7;
  const std::vector<float> x = pattern<float>(n, 3);
  blobrt::DeviceBuffer dx = device->allocate(n * sizeof(float));
  device->copy_to_device(x.data(), dx, 0, n * sizeof(float));
  float through_blobrt = -1, raw = -2;
  device->asum(n, dx, 0, &through_blobrt);
  float* pointer = nullptr;
  if (cudaMalloc(&pointer, n * sizeof(float)) != cudaSuccess) return 2;
  cudaMemcpy(pointer, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 2;
  cublasSasum_v2_64(handle, n, pointer, 1, &raw);
  cublasDestroy(handle);
  cudaFree(pointer);
  device->release(dx);
  if (through_blobrt != raw) {
    std::fprintf(stderr, "BLOBRT_CUDA_LEVEL1=cublas: asum %.9g, cublasSasum %.9g\n", through_blobrt, raw);
    return 1;
  }
  return 0;
}

class CudaLevel1Test : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs the binary: a fresh runtime
    const std::string why = cuda_unusable();
    if (!why.empty()) GTEST_SKIP() << "no usable CUDA device: " << why;
  }
};

TEST_P(CudaLevel1Test, AxpyScalAsumMatchTheHost) {
  const char* mode = GetParam();
  EXPECT_EXIT(
      {
        setenv("BLOBRT_CUDA_LEVEL1", mode, 1);
        const int failures = check_against_host<float>() + check_against_host<double>();
        std::exit(failures == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "BLOBRT_CUDA_LEVEL1=" << mode;
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaLevel1Test, ::testing::Values("auto", "cublas", "own", ""));

TEST(CudaLevel1, CublasModeGivesCublasBits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string why = cuda_unusable();
  if (!why.empty()) GTEST_SKIP() << "no usable CUDA device: " << why;
  EXPECT_EXIT(
      {
        setenv("BLOBRT_CUDA_LEVEL1", "cublas", 1);
        std::exit(check_cublas_bits());
      },
      ::testing::ExitedWithCode(0), "");
}

// A value the plugin does not know is an error naming it, never a silent default.
TEST(CudaLevel1, AnUnknownModeIsRefusedWithItsName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string why = cuda_unusable();
  if (!why.empty()) GTEST_SKIP() << "no usable CUDA device: " << why;
  EXPECT_EXIT(
      {
        setenv("BLOBRT_CUDA_LEVEL1", "fastest", 1);
        try {
          blobrt::open_device("cuda:0");
        } catch (const blobrt::Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "BLOBRT_CUDA_LEVEL1=fastest: expected auto, cublas or own");
}

}  // namespace
