// libblobrt-dist's NCCL part (libblobrt-dist-nccl.so, blobrt-dist/nccl) through its C table,
// as libblobrt-dist uses it, without MPI: one rank on CUDA device 0. Where no CUDA device
// is usable (no driver, as on CI's machines) every call that needs one must fail with a
// message naming the call and its CUDA/NCCL error, never crash; on a GPU node (the GPU
// bundle runs this suite there) a one-rank allreduce must give exact sums and means.
// NCCL allows one rank per GPU in a communicator, so with one GPU only one rank runs.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "dist_nccl_abi.h"

namespace {

const blobrt_dist_nccl_v1* table() {
  static const blobrt_dist_nccl_v1* t = [] {
    const char* path = std::getenv("BLOBRT_DIST_NCCL");
    if (!path || !*path) return static_cast<const blobrt_dist_nccl_v1*>(nullptr);
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return static_cast<const blobrt_dist_nccl_v1*>(nullptr);
    auto entry = reinterpret_cast<blobrt_dist_nccl_entry_fn>(dlsym(handle, BLOBRT_DIST_NCCL_ENTRY_SYMBOL));
    return entry ? entry() : nullptr;
  }();
  return t;
}

// Why no CUDA device can be used here, or "" when device 0 can.
std::string no_gpu_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e);
  return count > 0 ? "" : "no CUDA device";
}

class NcclPartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("BLOBRT_DIST_NCCL");
    ASSERT_NE(table(), nullptr) << "cannot load the NCCL part named by BLOBRT_DIST_NCCL ("
                                << (path ? path : "unset") << "): " << (path ? dlerror() : "");
  }
};

TEST_F(NcclPartTest, TableIsCompleteAndSaysItsVersion) {
  const blobrt_dist_nccl_v1* t = table();
  EXPECT_GE(t->struct_size, sizeof(blobrt_dist_nccl_v1));
  ASSERT_TRUE(t->version && t->unique_id && t->init && t->allreduce && t->broadcast && t->destroy);
  char text[128] = {};
  ASSERT_EQ(t->version(text, sizeof text), 0);
  EXPECT_EQ(std::string(text).rfind("NCCL 2.", 0), 0u) << text;
}

// Without a usable device: a clear error from whichever call first needs one.
TEST_F(NcclPartTest, WithoutAUsableDeviceFailsCleanly) {
  const std::string why = no_gpu_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is usable here: the GPU tests below run instead";
  const blobrt_dist_nccl_v1* t = table();
  unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES] = {};
  char err[512] = {};
  void* comm = nullptr;
  int status = t->unique_id(id, err, sizeof err);
  if (status == 0) status = t->init(id, 1, 0, 0, &comm, err, sizeof err);
  EXPECT_NE(status, 0) << "no CUDA device (" << why << "), yet NCCL initialised";
  EXPECT_EQ(comm, nullptr);
  const std::string message = err;
  EXPECT_TRUE(message.find("nccl") != std::string::npos || message.find("cuda") != std::string::npos)
      << "the message names the call: " << message;
  EXPECT_NE(message.find(':'), std::string::npos) << "and its error: " << message;
}

template <typename T>
void one_rank_allreduce(bool is_double) {
  const std::string why = no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  const blobrt_dist_nccl_v1* t = table();
  unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES] = {};
  char err[512] = {};
  ASSERT_EQ(t->unique_id(id, err, sizeof err), 0) << err;
  void* comm = nullptr;
  ASSERT_EQ(t->init(id, 1, 0, 0, &comm, err, sizeof err), 0) << err;
  // 2^20 + 3 elements (not a multiple of any vector width), values exact in float.
  const std::size_t n = (1u << 20) + 3;
  std::vector<T> host(n), back(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<T>(static_cast<double>(i % 4093) * 0.25 - 500);
  void* data = nullptr;
  ASSERT_EQ(cudaMalloc(&data, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  for (int mean : {0, 1}) {
    ASSERT_EQ(t->allreduce(comm, data, n, is_double ? 1 : 0, mean, err, sizeof err), 0) << err;
    ASSERT_EQ(cudaMemcpy(back.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], host[i]) << "element " << i << ", mean " << mean;
  }
  // Broadcast from rank 0 leaves rank 0's data as it is.
  ASSERT_EQ(t->broadcast(comm, data, n * sizeof(T), 0, err, sizeof err), 0) << err;
  ASSERT_EQ(cudaMemcpy(back.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  t->destroy(comm);
  cudaFree(data);
}

TEST_F(NcclPartTest, OneRankAllreduceFloatIsExact) { one_rank_allreduce<float>(false); }
TEST_F(NcclPartTest, OneRankAllreduceDoubleIsExact) { one_rank_allreduce<double>(true); }

}  // namespace
