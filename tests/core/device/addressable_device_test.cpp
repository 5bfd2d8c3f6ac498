// Addressable handles over a device whose handles are not addresses (addressable_device.hpp,
// request_addressable_handles): `handle + n` reaches byte n of the same buffer in every
// kind of call, a handle inside no live buffer is a blobrt::Error naming it, and what the
// device does not do (Caffe's math beyond level 1) runs the core's host path as before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "addressable_device.hpp"
#include "blobrt/device.hpp"
#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"

namespace {

using blobrt::ConstDeviceBuffer;
using blobrt::DeviceBuffer;
using blobrt::Precision;

// A device whose handles are small numbers, as an OpenCL cl_mem is to its user: handle + n
// is some other number (or nothing), never byte n. Level 1 on host memory, by hand.
class OpaqueDevice final : public blobrt::Device {
 public:
  OpaqueDevice() {
    description_.backend = "opaque";
    description_.name = "test device with opaque handles";
    description_.addressable_handles = false;
  }
  const blobrt::DeviceDescription& description() const noexcept override { return description_; }
  DeviceBuffer allocate(std::size_t bytes) override {
    const std::uintptr_t id = ++last_;
    buffers_[id] = Buffer{std::unique_ptr<char[]>(new char[bytes ? bytes : 1]), bytes};  // untouched: no memory yet
    return reinterpret_cast<DeviceBuffer>(id);
  }
  void release(DeviceBuffer buffer) noexcept override { buffers_.erase(reinterpret_cast<std::uintptr_t>(buffer)); }
  void copy_to_device(const void* host, DeviceBuffer dst, std::size_t off, std::size_t bytes) override {
    std::memcpy(bytes_of(dst, off, bytes), host, bytes);
  }
  void copy_to_host(ConstDeviceBuffer src, std::size_t off, void* host, std::size_t bytes) override {
    std::memcpy(host, bytes_of(src, off, bytes), bytes);
  }
  void copy_device(ConstDeviceBuffer src, std::size_t src_off, DeviceBuffer dst, std::size_t dst_off,
                   std::size_t bytes) override {
    std::memmove(bytes_of(dst, dst_off, bytes), bytes_of(src, src_off, bytes), bytes);
  }
  void memset(DeviceBuffer dst, std::size_t off, int value, std::size_t bytes) override {
    std::memset(bytes_of(dst, off, bytes), value, bytes);
  }
  void synchronize() override {}
  void axpy(Precision, std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
            std::int64_t y_off) override {
    const float* xs = floats(x, x_off, n);
    float* ys = floats(y, y_off, n);
    for (std::int64_t i = 0; i < n; ++i) ys[i] += static_cast<float>(alpha) * xs[i];
  }
  double dot(Precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
             std::int64_t y_off) override {
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += floats(x, x_off, n)[i] * floats(y, y_off, n)[i];
    return sum;
  }
  double asum(Precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off) override {
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += std::abs(floats(x, x_off, n)[i]);
    return sum;
  }
  void scal(Precision, std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_off) override {
    for (std::int64_t i = 0; i < n; ++i) floats(x, x_off, n)[i] *= static_cast<float>(alpha);
  }
  std::size_t live() const { return buffers_.size(); }

 private:
  // The bytes of a live buffer, or a test failure (a handle the adapter should have resolved).
  char* bytes_of(ConstDeviceBuffer handle, std::size_t off, std::size_t bytes) {
    auto found = buffers_.find(reinterpret_cast<std::uintptr_t>(handle));
    if (found == buffers_.end() || off + bytes > found->second.size) {
      blobrt::detail::fail("opaque device: handle ", handle, " at ", off, " for ", bytes, " bytes is not its own");
    }
    return found->second.bytes.get() + off;
  }
  float* floats(ConstDeviceBuffer handle, std::int64_t off, std::int64_t n) {
    return reinterpret_cast<float*>(bytes_of(handle, off * sizeof(float), n * sizeof(float)));
  }

  blobrt::DeviceDescription description_;
  struct Buffer {
    std::unique_ptr<char[]> bytes;
    std::size_t size;
  };
  std::map<std::uintptr_t, Buffer> buffers_;
  std::uintptr_t last_ = 0;
};

struct Fixture : ::testing::Test {
  std::shared_ptr<OpaqueDevice> opaque = std::make_shared<OpaqueDevice>();
  std::shared_ptr<blobrt::Device> device = blobrt::make_addressable(opaque);
};

float* at(DeviceBuffer buffer, std::size_t elements) { return static_cast<float*>(buffer) + elements; }

TEST_F(Fixture, TakesOffsetHandlesAndTellsNoOtherLibrary) {
  EXPECT_FALSE(blobrt::handles_take_offsets(*opaque));
  EXPECT_TRUE(blobrt::handles_take_offsets(*device));
  // DLPack export and NCCL read the description: a handle is still no address for them.
  EXPECT_FALSE(device->description().addressable_handles);
  EXPECT_EQ(device->description().name, opaque->description().name);
  EXPECT_EQ(blobrt::make_addressable(device), device) << "wrapped once";
  EXPECT_TRUE(blobrt::handles_take_offsets(*blobrt::host_device()));
  EXPECT_EQ(blobrt::make_addressable(blobrt::host_device()), blobrt::host_device()) << "host handles are addresses";
}

TEST_F(Fixture, AnOffsetHandleReachesThatByteInEveryKindOfCall) {
  DeviceBuffer x = device->allocate(8 * sizeof(float)), y = device->allocate(8 * sizeof(float));
  const std::vector<float> ones(8, 1.f), counting = {0, 1, 2, 3, 4, 5, 6, 7};
  device->copy_to_device(counting.data(), x, 0, 32);
  device->memset(y, 0, 0, 8 * sizeof(float));
  device->copy_to_device(ones.data(), at(y, 2), 0, 4 * sizeof(float));  // y = 0 0 1 1 1 1 0 0
  device->axpy(Precision::kFloat32, 3, 2.0, at(x, 4), 1, at(y, 1), 2);    // y[3..5] += 2 x[5..7]
  EXPECT_DOUBLE_EQ(device->asum(Precision::kFloat32, 8, y, 0), 4 + 2 * (5 + 6 + 7));
  EXPECT_DOUBLE_EQ(device->dot(Precision::kFloat32, 2, at(x, 6), 0, x, 0), 6 * 0 + 7 * 1);
  device->scal(Precision::kFloat32, 2, 10.0, at(x, 1), 0);  // x[1..2] *= 10
  device->copy_device(at(x, 1), 0, at(y, 6), sizeof(float), sizeof(float));  // y[7] = x[1]
  device->memset(at(y, 0), sizeof(float), 0, sizeof(float));                   // y[1] = 0
  std::vector<float> got(8);
  device->copy_to_host(at(y, 4), 0, got.data(), 4 * sizeof(float));
  EXPECT_EQ(got[0], 1 + 2 * 6.f);
  EXPECT_EQ(got[1], 1 + 2 * 7.f);
  EXPECT_EQ(got[3], 10.f);
  // Caffe's math beyond level 1 (not this device's): the core's host path, through the
  // copies above, with the handles' offsets added to the operation's own.
  device->gemv(Precision::kFloat32, blobrt::Transpose::kNo, 1, 2, 1.0, at(x, 2), 0, x, 1, 0.0, at(y, 7), 0);
  device->copy_to_host(at(y, 7), 0, got.data(), sizeof(float));
  EXPECT_EQ(got[0], 20.f * 10 + 3.f * 20);  // x[2] x[1] + x[3] x[2]
  EXPECT_TRUE(device->is_buffer(at(x, 8))) << "one past the end is still the buffer's (an empty operand)";
  device->release(x);
  device->release(y);
  EXPECT_EQ(opaque->live(), 0u);
}

TEST_F(Fixture, AHandleInsideNoLiveBufferIsAnErrorNamingIt) {
  DeviceBuffer x = device->allocate(16);
  std::vector<char> host(16);
  EXPECT_FALSE(device->is_buffer(static_cast<char*>(x) + 4096)) << "past the end, in the gap before the next";
  try {
    device->copy_to_host(static_cast<char*>(x) + 4096, 0, host.data(), 1);
    FAIL() << "a handle past its buffer was used";
  } catch (const blobrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("inside no live buffer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("opaque:0"), std::string::npos) << e.what();
  }
  device->release(x);
  EXPECT_THROW(device->memset(x, 0, 0, 1), blobrt::Error) << "a released buffer's handle";
  EXPECT_THROW(device->axpy(Precision::kFloat32, 1, 1.0, host.data(), 0, host.data(), 0), blobrt::Error)
      << "host memory is no handle of the device";
  device->release(x);  // twice: nothing happens, as for other devices
}

TEST_F(Fixture, ElementOffsetsMustBeWholeElements) {
  DeviceBuffer x = device->allocate(16);
  EXPECT_THROW(device->scal(Precision::kFloat32, 1, 2.0, static_cast<char*>(x) + 2, 0), blobrt::Error);
  device->release(x);
}

TEST_F(Fixture, TwoDevicesNeverShareAHandle) {
  auto other_opaque = std::make_shared<OpaqueDevice>();
  auto other = blobrt::make_addressable(other_opaque);
  DeviceBuffer a = device->allocate(64), b = other->allocate(64);
  EXPECT_NE(a, b);
  EXPECT_FALSE(device->is_buffer(b));
  EXPECT_THROW(device->memset(b, 0, 0, 1), blobrt::Error) << "the other device's buffer";
  device->release(b);  // not this device's: left alone
  EXPECT_EQ(other_opaque->live(), 1u);
  other->release(b);
  device->release(a);
  EXPECT_EQ(opaque->live() + other_opaque->live(), 0u);
}

// In a range of 1 GiB (the smallest): once the bump mark reaches the end, released ranges
// are found again, and a range placed in a gap never overlaps what the mark hands out next.
TEST(AddressableRange, ReusesReleasedRangesAndNeverOverlaps) {
  auto opaque = std::make_shared<OpaqueDevice>();
  auto device = blobrt::make_addressable(opaque, std::size_t{1} << 30);
  const std::size_t big = (std::size_t{1} << 30) / 4 - 8192;  // with its gap, four fill the range
  std::vector<DeviceBuffer> held;
  for (int i = 0; i < 3; ++i) held.push_back(device->allocate(big));
  device->release(held[2]);  // the top one leaves: the mark stays past it
  held.pop_back();
  device->release(held[0]);  // a gap at the bottom
  DeviceBuffer again = device->allocate(big);  // the mark still has room: the top quarter
  DeviceBuffer gap = device->allocate(big);    // the mark has none: the bottom gap
  DeviceBuffer middle = device->allocate(big);  // and then the one held[2] left
  EXPECT_LT(gap, held[1]);
  EXPECT_LT(held[1], middle);
  EXPECT_LT(middle, again);
  EXPECT_THROW(device->allocate(big), blobrt::Error) << "full";
  // Every byte of each buffer is its own: a write through one is never another's.
  for (DeviceBuffer b : {held[1], again, gap, middle}) {
    const float mark = static_cast<float>(reinterpret_cast<std::uintptr_t>(b) % 1000);
    device->copy_to_device(&mark, static_cast<char*>(b) + big - sizeof(float), 0, sizeof(float));
  }
  for (DeviceBuffer b : {held[1], again, gap, middle}) {
    float got = 0;
    device->copy_to_host(static_cast<char*>(b) + big - sizeof(float), 0, &got, sizeof(float));
    EXPECT_EQ(got, static_cast<float>(reinterpret_cast<std::uintptr_t>(b) % 1000));
  }
  for (DeviceBuffer b : {held[1], again, gap, middle}) device->release(b);
  EXPECT_EQ(opaque->live(), 0u);
  for (int i = 0; i < 64; ++i) device->release(device->allocate(big));  // and again, after the wrap
  EXPECT_EQ(opaque->live(), 0u);
}

TEST_F(Fixture, AViewIsTheHandleAtTheOffsetWithinItsBuffer) {
  DeviceBuffer x = device->allocate(64);
  // The opaque device offers no views (view_alignment 0): still none.
  EXPECT_THROW(device->view(x, 16, 16), blobrt::UnsupportedError);
  device->release(x);
}

}  // namespace
