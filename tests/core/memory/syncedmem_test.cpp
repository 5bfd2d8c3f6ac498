// Caffe's test_syncedmem, on every device, plus blobrt's own rules: zero copies on
// host-memory devices, ownership of memory set from outside, binding to a device.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "backend_param.hpp"
#include "blobrt/data_ptr.hpp"
#include "blobrt/error.hpp"
#include "blobrt/syncedmem.hpp"

namespace blobrt {
namespace {

class SyncedMemoryTest : public testing::OnEveryDevice {
 protected:
  // Reads a device handle back through the device (gpu_data may be a cl_mem).
  std::vector<char> read_device(const void* handle, std::size_t bytes) {
    std::vector<char> out(bytes);
    device().copy_to_host(handle, 0, out.data(), bytes);
    return out;
  }
};

TEST_P(SyncedMemoryTest, TestInitialization) {
  SyncedMemory mem(10);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
  EXPECT_EQ(mem.size(), 10u);
  auto* p_mem = new SyncedMemory(10 * sizeof(float));
  EXPECT_EQ(p_mem->size(), 10 * sizeof(float));
  delete p_mem;
  EXPECT_EQ(SyncedMemory::HEAD_AT_HOST, SyncedMemory::HEAD_AT_CPU);
  EXPECT_EQ(SyncedMemory::HEAD_AT_DEVICE, SyncedMemory::HEAD_AT_GPU);
}

TEST_P(SyncedMemoryTest, TestAllocationCPUGPU) {
  SyncedMemory mem(10);
  EXPECT_TRUE(mem.cpu_data());
  EXPECT_TRUE(mem.gpu_data());
  EXPECT_TRUE(mem.mutable_cpu_data());
  EXPECT_TRUE(mem.mutable_gpu_data());
}

TEST_P(SyncedMemoryTest, TestAllocationCPU) {
  SyncedMemory mem(10);
  EXPECT_TRUE(mem.cpu_data());
  EXPECT_TRUE(mem.mutable_cpu_data());
}

TEST_P(SyncedMemoryTest, TestAllocationGPU) {
  SyncedMemory mem(10);
  EXPECT_TRUE(mem.gpu_data());
  EXPECT_TRUE(mem.mutable_gpu_data());
}

TEST_P(SyncedMemoryTest, FirstTouchIsZeroOnBothSides) {
  SyncedMemory on_host(64);
  const char* h = static_cast<const char*>(on_host.cpu_data());
  for (int i = 0; i < 64; ++i) ASSERT_EQ(h[i], 0);
  EXPECT_EQ(on_host.head(), SyncedMemory::HEAD_AT_CPU);
  SyncedMemory on_device(64);
  auto back = read_device(on_device.gpu_data(), 64);
  for (char c : back) ASSERT_EQ(c, 0);
  EXPECT_EQ(on_device.head(), SyncedMemory::HEAD_AT_GPU);
}

TEST_P(SyncedMemoryTest, TestCPUWrite) {
  SyncedMemory mem(10);
  void* cpu_data = mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  std::memset(cpu_data, 1, mem.size());
  for (std::size_t i = 0; i < mem.size(); ++i) EXPECT_EQ(static_cast<char*>(cpu_data)[i], 1);
  // do another round
  cpu_data = mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  std::memset(cpu_data, 2, mem.size());
  for (std::size_t i = 0; i < mem.size(); ++i) EXPECT_EQ(static_cast<char*>(cpu_data)[i], 2);
}

TEST_P(SyncedMemoryTest, TestGPURead) {
  SyncedMemory mem(10);
  void* cpu_data = mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  std::memset(cpu_data, 1, mem.size());
  const void* gpu_data = mem.gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  for (char c : read_device(gpu_data, 10)) EXPECT_EQ(c, 1);
  // do another round
  cpu_data = mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  std::memset(cpu_data, 2, mem.size());
  for (std::size_t i = 0; i < mem.size(); ++i) EXPECT_EQ(static_cast<char*>(cpu_data)[i], 2);
  gpu_data = mem.gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  for (char c : read_device(gpu_data, 10)) EXPECT_EQ(c, 2);
}

TEST_P(SyncedMemoryTest, TestGPUWrite) {
  SyncedMemory mem(10);
  void* gpu_data = mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
  device().memset(gpu_data, 0, 1, mem.size());
  const void* cpu_data = mem.cpu_data();
  for (std::size_t i = 0; i < mem.size(); ++i) EXPECT_EQ(static_cast<const char*>(cpu_data)[i], 1);
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);

  gpu_data = mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
  device().memset(gpu_data, 0, 2, mem.size());
  cpu_data = mem.cpu_data();
  for (std::size_t i = 0; i < mem.size(); ++i) EXPECT_EQ(static_cast<const char*>(cpu_data)[i], 2);
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
}

TEST_P(SyncedMemoryTest, EveryTransitionOfTheStateMachine) {
  using S = SyncedMemory;
  SyncedMemory mem(16);
  mem.cpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_CPU);  // UNINITIALIZED -> HEAD_AT_CPU
  mem.cpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_CPU);  // read at the head: no change
  mem.gpu_data();
  EXPECT_EQ(mem.head(), S::SYNCED);       // HEAD_AT_CPU -> SYNCED
  mem.cpu_data();
  EXPECT_EQ(mem.head(), S::SYNCED);
  mem.gpu_data();
  EXPECT_EQ(mem.head(), S::SYNCED);
  mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_GPU);  // SYNCED -> HEAD_AT_GPU
  mem.gpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_GPU);
  mem.cpu_data();
  EXPECT_EQ(mem.head(), S::SYNCED);       // HEAD_AT_GPU -> SYNCED
  mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_CPU);  // SYNCED -> HEAD_AT_CPU
  mem.mutable_gpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_GPU);  // HEAD_AT_CPU -> HEAD_AT_GPU (via a sync)
  mem.mutable_cpu_data();
  EXPECT_EQ(mem.head(), S::HEAD_AT_CPU);  // HEAD_AT_GPU -> HEAD_AT_CPU (via a sync)

  SyncedMemory fresh(16);
  fresh.mutable_gpu_data();
  EXPECT_EQ(fresh.head(), S::HEAD_AT_GPU);  // UNINITIALIZED -> HEAD_AT_GPU
}

TEST_P(SyncedMemoryTest, BytesCopiedOnlyWhenTheDeviceHasItsOwnMemory) {
  SyncedMemory mem(1 << 16);
  reset_transfer_counters();
  std::memset(mem.mutable_cpu_data(), 3, mem.size());
  mem.gpu_data();
  mem.mutable_gpu_data();
  mem.cpu_data();
  TransferCounters c = transfer_counters();
  if (unified()) {
    EXPECT_EQ(c.host_to_device, 0u);
    EXPECT_EQ(c.device_to_host, 0u);
    EXPECT_EQ(mem.cpu_data(), mem.gpu_data());  // one allocation for both mirrors
  } else if (device().description().memory_model == MemoryModel::kAliased) {
    // The mirror is the memory behind the buffer: transitions map/unmap, copy nothing.
    EXPECT_EQ(c.host_to_device, 0u);
    EXPECT_EQ(c.device_to_host, 0u);
    EXPECT_EQ(mem.cpu_data(), device().host_alias(mem.gpu_data()));
  } else {
    EXPECT_EQ(c.host_to_device, mem.size());
    EXPECT_EQ(c.device_to_host, mem.size());
  }
  const char* back = static_cast<const char*>(mem.cpu_data());
  for (std::size_t i = 0; i < mem.size(); i += 4099) ASSERT_EQ(back[i], 3);
}

TEST_P(SyncedMemoryTest, SetCpuDataIsUsedAndNeverFreed) {
  std::vector<char> external(32, 7);
  {
    SyncedMemory mem(32);
    mem.mutable_cpu_data();  // an owned buffer first, which set_cpu_data must free
    mem.set_cpu_data(external.data());
    EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
    EXPECT_EQ(mem.cpu_data(), external.data());
    for (char c : read_device(mem.gpu_data(), 32)) EXPECT_EQ(c, 7);
    if (unified()) { EXPECT_EQ(mem.gpu_data(), external.data()); }  // zero-copy
    mem.mutable_gpu_data();
    device().memset(mem.mutable_gpu_data(), 0, 9, 32);
    mem.cpu_data();
  }
  // The destructor did not free `external` (ASan/valgrind would flag it); the data
  // written on the device came back into it.
  for (char c : external) EXPECT_EQ(c, 9);
}

TEST_P(SyncedMemoryTest, SetGpuDataIsUsedAndNeverFreed) {
  DeviceBuffer handle = device().allocate(24);
  device().memset(handle, 0, 5, 24);
  {
    SyncedMemory mem(24);
    mem.set_gpu_data(handle);
    EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
    EXPECT_EQ(mem.gpu_data(), handle);
    const char* host = static_cast<const char*>(mem.cpu_data());
    for (int i = 0; i < 24; ++i) EXPECT_EQ(host[i], 5);
    EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  }
  // Still ours: readable and releasable exactly once.
  auto back = read_device(handle, 24);
  for (char c : back) EXPECT_EQ(c, 5);
  device().release(handle);
}

TEST_P(SyncedMemoryTest, NullPointersAreErrors) {
  SyncedMemory mem(8);
  EXPECT_THROW(mem.set_cpu_data(nullptr), Error);
  EXPECT_THROW(mem.set_gpu_data(nullptr), Error);
}

TEST_P(SyncedMemoryTest, ZeroSizeStillGivesValidPointers) {
  SyncedMemory mem(0);
  EXPECT_TRUE(mem.cpu_data());
  EXPECT_TRUE(mem.gpu_data());
  EXPECT_EQ(mem.size(), 0u);
}

TEST_P(SyncedMemoryTest, StaysBoundToItsDevice) {
  SyncedMemory mem(16);
  mem.mutable_cpu_data();
  std::string here = GetParam();
  std::string other = here == "host:0" ? available_devices().back() : "host:0";
  if (other == here) GTEST_SKIP() << "only one device on this machine";
  select_backend(other);
  EXPECT_EQ(mem.device()->description().id(), here);
  try {
    mem.gpu_data();
    ADD_FAILURE() << "gpu_data() after the active device changed did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bound to device " + here), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(other), std::string::npos) << e.what();
  }
  // The host side is still readable, and switching back makes it usable again.
  EXPECT_TRUE(mem.cpu_data());
  select_backend(here);
  EXPECT_TRUE(mem.gpu_data());
}

// Caffe's async_gpu_push: from HEAD_AT_CPU to SYNCED with the data on the device; any
// other head is an error naming it.
TEST_P(SyncedMemoryTest, AsyncGpuPush) {
  SyncedMemory mem(10);
  EXPECT_THROW(mem.async_gpu_push(0), Error);  // UNINITIALIZED
  std::memset(mem.mutable_cpu_data(), 3, 10);
  int stream = 0;  // a cudaStream_t in Caffe code; any type here
  mem.async_gpu_push(stream);
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  char back[10];
  device().copy_to_host(mem.gpu_data(), 0, back, 10);
  for (char c : back) EXPECT_EQ(c, 3);
  try {
    mem.async_gpu_push(stream);
    ADD_FAILURE() << "a push from SYNCED succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not SYNCED"), std::string::npos) << e.what();
  }
}

INSTANTIATE_ON_EVERY_DEVICE(SyncedMemoryTest);

// DataPtr (data_ptr.hpp): freed once, by its own deleter and device, whatever moves it.
struct Freed {
  int count = 0;
  Device* device = nullptr;
  void* pointer = nullptr;
};
Freed freed;
void record_free(Device* device, void* pointer) noexcept {
  ++freed.count;
  freed.device = device;
  freed.pointer = pointer;
}

TEST(DataPtrTest, FreedOnceThroughTheDeviceThatAllocated) {
  freed = Freed{};
  int memory = 0;
  std::shared_ptr<Device> device = host_device();
  {
    DataPtr first(&memory, device, record_free);
    DataPtr second = std::move(first);
    EXPECT_FALSE(first);
    EXPECT_EQ(second.get(), &memory);
    DataPtr third;
    third = std::move(second);
    EXPECT_EQ(freed.count, 0);
  }
  EXPECT_EQ(freed.count, 1);
  EXPECT_EQ(freed.device, device.get());
  EXPECT_EQ(freed.pointer, &memory);
}

TEST(DataPtrTest, BorrowedMemoryIsNeverFreed) {
  freed = Freed{};
  int memory = 0;
  {
    DataPtr lent = DataPtr::borrowed(&memory);
    lent.reset();
    EXPECT_FALSE(lent);
  }
  EXPECT_EQ(freed.count, 0);
  // Assigning over an owning DataPtr frees what it held, once.
  DataPtr owner(&memory, nullptr, record_free);
  owner = DataPtr::borrowed(&memory);
  EXPECT_EQ(freed.count, 1);
}

// A SyncedMemory made on one device and freed after another became active frees its
// buffer through the first (simgpu's handles are meaningless to any other device).
TEST_P(SyncedMemoryTest, FreedThroughItsOwnDeviceAfterASwitch) {
  auto mem = std::make_unique<SyncedMemory>(1024);
  mem->mutable_gpu_data();
  mem->mutable_cpu_data();
  select_backend(GetParam() == "host:0" ? available_devices().back() : "host");
  mem.reset();  // under ASan/valgrind a wrong-device free shows here
  select_backend(GetParam());
}

// Views (Device::view, plugin ABI 1.1): a SyncedMemory re-pointed at a view of a larger
// buffer reads and writes that buffer's bytes, in every memory model, and keeps the buffer
// alive through its owner after everyone else let go of it.
TEST_P(SyncedMemoryTest, ViewOfALargerBufferServesAsItsDeviceSide) {
  const DeviceDescription& d = device().description();
  if (d.view_alignment == 0) GTEST_SKIP() << d.id() << " offers no views";
  std::shared_ptr<Device> dev = current_device();
  const std::size_t offset = d.view_alignment * 2, bytes = 10 * sizeof(float);
  DeviceBuffer whole = dev->allocate(offset + bytes + d.view_alignment);
  std::vector<float> zeros((offset + bytes) / sizeof(float) + 64, 0.f);
  dev->copy_to_device(zeros.data(), whole, 0, offset + bytes + d.view_alignment);
  DeviceBuffer view = dev->view(whole, offset, bytes);
  auto owner = std::shared_ptr<void>(whole, [dev, view](void* buffer) {
    dev->release_view(view);
    dev->release(buffer);
  });
  {
    SyncedMemory mem(bytes);
    mem.set_gpu_data(view, owner);
    owner.reset();  // mem keeps the buffer alive now
    float* host = static_cast<float*>(mem.mutable_cpu_data());
    for (int i = 0; i < 10; ++i) host[i] = static_cast<float>(i + 1);
    mem.gpu_data();  // head back on the device
    float sum = 0;
    dev->asum(10, view, 0, &sum);
    EXPECT_EQ(sum, 55.f);
    std::vector<float> back(zeros.size(), -1.f);
    dev->copy_to_host(whole, 0, back.data(), offset + bytes);
    EXPECT_EQ(back[offset / sizeof(float) - 1], 0.f) << "the byte before the view is untouched";
    EXPECT_EQ(back[offset / sizeof(float)], 1.f);
    EXPECT_EQ(back[offset / sizeof(float) + 9], 10.f);
  }
}

// set_gpu_data with a size: the region's size becomes size(), smaller (a view: nothing past
// it is read or written) or larger (a host mirror of the old size is not reused).
TEST_P(SyncedMemoryTest, SizedSetGpuDataTakesTheRegionsSize) {
  std::shared_ptr<Device> dev = current_device();
  auto owned = [dev](DeviceBuffer buffer) {
    return std::shared_ptr<void>(buffer, [dev](void* b) { dev->release(b); });
  };
  SyncedMemory mem(40 * sizeof(float));
  mem.mutable_cpu_data();  // a mirror of 40 floats
  DeviceBuffer larger = dev->allocate(400 * sizeof(float));
  mem.set_gpu_data(larger, owned(larger), 400 * sizeof(float));
  EXPECT_EQ(mem.size(), 400 * sizeof(float));
  float* host = static_cast<float*>(mem.mutable_cpu_data());
  for (int i = 0; i < 400; ++i) host[i] = 1.f;  // ASan/valgrind: past a reused 40-float mirror
  mem.gpu_data();
  float sum = 0;
  dev->asum(400, mem.gpu_data(), 0, &sum);
  EXPECT_EQ(sum, 400.f);

  const DeviceDescription& d = device().description();
  if (d.view_alignment == 0) GTEST_SKIP() << d.id() << " offers no views";
  const std::size_t whole_bytes = 20 * sizeof(float);
  DeviceBuffer whole = dev->allocate(whole_bytes);
  std::vector<float> guard(20, -1.f);
  dev->copy_to_device(guard.data(), whole, 0, whole_bytes);
  DeviceBuffer view = dev->view(whole, 0, 4 * sizeof(float));
  auto owner = std::shared_ptr<void>(whole, [dev, view](void* buffer) {
    dev->release_view(view);
    dev->release(buffer);
  });
  mem.set_gpu_data(view, owner, 4 * sizeof(float));
  EXPECT_EQ(mem.size(), 4 * sizeof(float));
  host = static_cast<float*>(mem.mutable_cpu_data());
  for (int i = 0; i < 4; ++i) host[i] = 2.f;
  mem.gpu_data();
  std::vector<float> back(20, 0.f);
  dev->copy_to_host(whole, 0, back.data(), whole_bytes);
  EXPECT_EQ(back[3], 2.f);
  EXPECT_EQ(back[4], -1.f) << "nothing past the view";
}

TEST_P(SyncedMemoryTest, MisalignedViewIsAnErrorNamingTheAlignment) {
  const DeviceDescription& d = device().description();
  if (d.view_alignment <= 1) GTEST_SKIP() << d.id() << " takes any offset or no views";
  DeviceBuffer whole = device().allocate(4 * d.view_alignment);
  try {
    device().view(whole, 4, 16);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("view alignment " + std::to_string(d.view_alignment)), std::string::npos)
        << e.what();
  }
  device().release(whole);
}

TEST_P(SyncedMemoryTest, DeviceWithoutViewsSaysSo) {
  const DeviceDescription& d = device().description();
  if (d.view_alignment != 0) GTEST_SKIP() << d.id() << " offers views";
  DeviceBuffer whole = device().allocate(64);
  EXPECT_THROW(device().view(whole, 0, 16), UnsupportedError);
  device().release(whole);
}

// A run filtered to some devices' names sees them (tests/meson.build, *_aliased).
TEST(RequestedDevices, ArePresent) { blobrt::testing::expect_requested_devices(); }

}  // namespace
}  // namespace blobrt
