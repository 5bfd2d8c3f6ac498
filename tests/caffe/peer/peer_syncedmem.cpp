// caffe::SyncedMemory as Caffe code drives it: the head's states under Caffe's names and
// every move between them that Caffe's test_syncedmem walks, with the values checked on
// both sides (device bytes read back through caffe_gpu_memcpy, as Caffe code would).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "peer_test.hpp"

namespace caffe_peer {
namespace {

using caffe::SyncedMemory;

std::vector<char> read_back(const SyncedMemory& mem, const void* gpu) {
  std::vector<char> out(mem.size());
  caffe::caffe_gpu_memcpy(mem.size(), gpu, out.data());
  return out;
}

bool all_bytes(const void* p, std::size_t n, char value) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    if (c[i] != value) return false;
  }
  return true;
}

// meson runs this program once per backend: each run is on the backend it names.
TEST(PeerSyncedMemory, RunsOnTheBackendAsked) {
  const char* asked = std::getenv("BLOBRT_BACKEND");
  if (!asked || !*asked) GTEST_SKIP() << "BLOBRT_BACKEND not set";
  const std::string backend(asked);
  EXPECT_EQ(blobrt::current_device()->description().backend, backend.substr(0, backend.find(':')));
}

TEST(PeerSyncedMemory, StartsUninitializedWithItsSize) {
  SyncedMemory mem(10);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
  EXPECT_EQ(mem.size(), 10u);
  SyncedMemory* floats = new SyncedMemory(10 * sizeof(float));
  EXPECT_EQ(floats->size(), 10 * sizeof(float));
  delete floats;
}

TEST(PeerSyncedMemory, BothSidesAllocate) {
  SyncedMemory cpu_first(10);
  EXPECT_TRUE(cpu_first.cpu_data());
  EXPECT_TRUE(cpu_first.mutable_cpu_data());
  EXPECT_TRUE(cpu_first.gpu_data());
  EXPECT_TRUE(cpu_first.mutable_gpu_data());
  SyncedMemory gpu_first(10);
  EXPECT_TRUE(gpu_first.gpu_data());
  EXPECT_TRUE(gpu_first.mutable_gpu_data());
  SyncedMemory cpu_only(10);
  EXPECT_TRUE(cpu_only.cpu_data());
  EXPECT_TRUE(cpu_only.mutable_cpu_data());
}

TEST(PeerSyncedMemory, FirstReadOfEitherSideIsZeros) {
  SyncedMemory a(16);
  EXPECT_TRUE(all_bytes(a.cpu_data(), a.size(), 0));
  EXPECT_EQ(a.head(), SyncedMemory::HEAD_AT_CPU);
  SyncedMemory b(16);
  EXPECT_EQ(read_back(b, b.gpu_data()), std::vector<char>(16, 0));
  EXPECT_EQ(b.head(), SyncedMemory::HEAD_AT_GPU);
}

TEST(PeerSyncedMemory, CpuWritesKeepTheHeadOnTheCpu) {
  SyncedMemory mem(10);
  void* cpu = mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  caffe::caffe_memset(mem.size(), 1, cpu);
  EXPECT_TRUE(all_bytes(mem.cpu_data(), mem.size(), 1));
  cpu = mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  caffe::caffe_memset(mem.size(), 2, cpu);
  EXPECT_TRUE(all_bytes(mem.cpu_data(), mem.size(), 2));
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
}

TEST(PeerSyncedMemory, GpuReadSynchronisesWhatTheCpuWrote) {
  SyncedMemory mem(10);
  caffe::caffe_memset(mem.size(), 1, mem.mutable_cpu_data());
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  const void* gpu = mem.gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  EXPECT_EQ(read_back(mem, gpu), std::vector<char>(10, 1));
  // A second round: the CPU writes again, the device sees the new bytes.
  caffe::caffe_memset(mem.size(), 2, mem.mutable_cpu_data());
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  gpu = mem.gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  EXPECT_EQ(read_back(mem, gpu), std::vector<char>(10, 2));
  // Reading the host side of synced memory leaves it synced.
  EXPECT_TRUE(all_bytes(mem.cpu_data(), mem.size(), 2));
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
}

TEST(PeerSyncedMemory, CpuReadSynchronisesWhatTheGpuWrote) {
  SyncedMemory mem(10);
  void* gpu = mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
  caffe::caffe_gpu_memset(mem.size(), 1, gpu);
  const void* cpu = mem.cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  EXPECT_TRUE(all_bytes(cpu, mem.size(), 1));
  gpu = mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
  caffe::caffe_gpu_memset(mem.size(), 2, gpu);
  cpu = mem.cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  EXPECT_TRUE(all_bytes(cpu, mem.size(), 2));
  // From synced, a write on either side moves the head there and nothing else.
  mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  mem.gpu_data();
  mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
}

TEST(PeerSyncedMemory, CaffeCopyInGpuModeMovesDeviceBytes) {
  Caffe::set_mode(Caffe::GPU);
  SyncedMemory from(4 * sizeof(float)), to(4 * sizeof(float));
  float* host = static_cast<float*>(from.mutable_cpu_data());
  for (int i = 0; i < 4; ++i) host[i] = 0.5f * (i + 1);
  caffe::caffe_copy(4, static_cast<const float*>(from.gpu_data()), static_cast<float*>(to.mutable_gpu_data()));
  EXPECT_EQ(to.head(), SyncedMemory::HEAD_AT_GPU);
  const float* back = static_cast<const float*>(to.cpu_data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], 0.5f * (i + 1));
  Caffe::set_mode(Caffe::CPU);
}

}  // namespace
}  // namespace caffe_peer
