// A CUDA build of Caffe code on blobrt (no CPU_ONLY): a kernel written as Caffe's .cu layers
// are (CUDA_KERNEL_LOOP, CAFFE_GET_BLOCKS, CAFFE_CUDA_NUM_THREADS, CUDA_POST_KERNEL_CHECK,
// CUDA_CHECK) compiled by nvcc with blobrt-caffe's caffe/*.hpp and a generated caffe.pb.h,
// run on the pointers gpu_data()/mutable_gpu_data() return on the cuda backend. Without a
// usable CUDA device the run is skipped with the reason (the build is what CI checks).
// Also: Caffe's two ways of moving a thread to a GPU (Caffe::SetDevice, a bare
// cudaSetDevice) keep the CUDA runtime's device and blobrt's thread device the same.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/util/device_alternate.hpp"
#include "caffe/util/math_functions.hpp"

namespace caffe {

// As Caffe's relu_layer.cu.
template <typename Dtype>
__global__ void ReLUForward(const int n, const Dtype* in, Dtype* out, Dtype negative_slope) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] > 0 ? in[index] : in[index] * negative_slope; }
}

}  // namespace caffe

namespace {

TEST(CaffeCudaBuild, ErrorStringsAreCaffes) {
  EXPECT_EQ(std::string(caffe::curandGetErrorString(CURAND_STATUS_LAUNCH_FAILURE)), "CURAND_STATUS_LAUNCH_FAILURE");
  EXPECT_FALSE(std::string(caffe::cublasGetErrorString(CUBLAS_STATUS_NOT_INITIALIZED)).empty());
  EXPECT_EQ(caffe::CAFFE_GET_BLOCKS(1025), 3);
}

TEST(CaffeCudaBuild, CaffeStyleKernelRunsOnBlobrtCudaMemory) {
  try {
    blobrt::select_backend("cuda");
  } catch (const blobrt::Error& e) {
    GTEST_SKIP() << "no usable CUDA device: " << e.what();
  }
  caffe::Caffe::set_mode(caffe::Caffe::GPU);
  caffe::Blob<float> bottom(2, 3, 4, 5), top(2, 3, 4, 5);
  const int n = bottom.count();
  float* x = bottom.mutable_cpu_data();
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i - n / 2);
  caffe::ReLUForward<float><<<caffe::CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
      n, bottom.gpu_data(), top.mutable_gpu_data(), 0.25f);
  CUDA_POST_KERNEL_CHECK;
  CUDA_CHECK(cudaDeviceSynchronize());
  const float* y = top.cpu_data();
  for (int i = 0; i < n; ++i) {
    const float v = static_cast<float>(i - n / 2);
    ASSERT_EQ(y[i], v > 0 ? v : v * 0.25f) << "element " << i;
  }
  float asum = 0;
  caffe::caffe_gpu_asum(n, top.gpu_data(), &asum);  // blobrt's caffe_gpu_* on the same memory
  EXPECT_GT(asum, 0.f);
  blobrt::select_backend("auto");
}

// A cudaSetDevice the CUDA runtime refuses (no such device; or no driver at all) leaves
// blobrt's thread device as it was, and off the cuda backend cudaSetDevice never moves it.
TEST(CaffeCudaBuild, CudaSetDeviceOffCudaLeavesBlobrtsDevice) {
  blobrt::select_backend("host");
  std::thread([] {
    EXPECT_NE(cudaSetDevice(1 << 20), cudaSuccess);
    EXPECT_EQ(blobrt::current_device_id(), "host:0");
    (void)cudaSetDevice(0);  // a GPU node accepts it, a node without a driver does not
    EXPECT_EQ(blobrt::current_device_id(), "host:0");
  }).join();
  blobrt::select_backend("auto");
}

// The process on the cuda backend (skipped with the reason where no CUDA device is
// usable); `last` is the last CUDA device, so that a node with several GPUs checks one
// other than the default.
class CaffeCudaDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      blobrt::select_backend("cuda");
    } catch (const blobrt::Error& e) {
      GTEST_SKIP() << "no usable CUDA device: " << e.what();
    }
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    last = count - 1;
  }
  void TearDown() override { blobrt::select_backend("auto"); }
  int last = 0;
};

// Caffe's InternalThread: a new thread calls cudaSetDevice(n), then allocates; the memory
// must be on cuda:n, where that thread's kernels launch, whatever blobrt device the thread
// had.
TEST_F(CaffeCudaDevices, CudaSetDeviceMovesBlobrtsThreadDevice) {
  const int last = this->last;
  std::thread([last] {
    blobrt::select_thread_device("host:0");  // whatever the thread had before
    ASSERT_EQ(cudaSetDevice(last), cudaSuccess);
    EXPECT_EQ(blobrt::current_device_id(), "cuda:" + std::to_string(last));
    EXPECT_NE(cudaSetDevice(1 << 20), cudaSuccess);
    EXPECT_EQ(blobrt::current_device_id(), "cuda:" + std::to_string(last));
  }).join();
  EXPECT_EQ(blobrt::current_device_id(), "cuda:0") << "the other thread's choice stays its own";
}

// The caffe tool's Caffe::SetDevice(n): blobrt selects cuda:n for the thread and the CUDA
// runtime's current device (where Caffe's kernels launch) follows. (With one GPU the
// runtime's device is 0 anyway: only a node with several tells this apart.)
TEST_F(CaffeCudaDevices, CaffeSetDeviceMovesTheCudaRuntimesDevice) {
  const int last = this->last;
  std::thread([last] {
    caffe::Caffe::SetDevice(last);
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    EXPECT_EQ(device, last);
    EXPECT_EQ(blobrt::current_device_id(), "cuda:" + std::to_string(last));
  }).join();
}

}  // namespace
