// Code written against Caffe compiles with only the include changed, and the math
// helpers agree with Blob's own on host pointers and on device handles.
#include <gtest/gtest.h>

#include "backend_param.hpp"
#include "blobrt/caffe_compat.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

namespace {

using namespace caffe;  // as Caffe code does
using Shape = vector<int>;

class CaffeCompatTest : public blobrt::testing::OnEveryDevice {};

TEST_P(CaffeCompatTest, HostMath) {
  vector<float> x{1, -2, 3}, y{4, 5, -6};
  caffe_axpy<float>(3, 2.0f, x.data(), y.data());
  EXPECT_EQ(y, (vector<float>{6, 1, 0}));
  EXPECT_EQ(caffe_cpu_dot<float>(3, x.data(), x.data()), 14);
  EXPECT_EQ(caffe_cpu_asum<float>(3, x.data()), 6);
  caffe_scal<float>(3, -1.0f, x.data());
  EXPECT_EQ(x, (vector<float>{-1, 2, -3}));
  vector<double> a{1.5, 2.5}, b(2);
  caffe_copy<double>(2, a.data(), b.data());
  EXPECT_EQ(a, b);
  caffe_memset(2 * sizeof(double), 0, b.data());
  EXPECT_EQ(b, (vector<double>{0, 0}));
}

TEST_P(CaffeCompatTest, DeviceMathOnGpuHandles) {
  shared_ptr<Blob<float> > blob(new Blob<float>(1, 1, 2, 3));
  float* data = blob->mutable_cpu_data();
  for (int i = 0; i < 6; ++i) data[i] = static_cast<float>(i - 2);  // -2 -1 0 1 2 3
  Blob<float> other;
  other.ReshapeLike(*blob);
  float* x = blob->mutable_gpu_data();
  float* y = other.mutable_gpu_data();
  caffe_gpu_memcpy(6 * sizeof(float), x, y);
  caffe_gpu_axpy<float>(6, 1.0f, x, y);  // y = 2x
  caffe_gpu_scal<float>(6, 0.5f, y);     // y = x
  float dot = 0, asum = 0;
  caffe_gpu_dot<float>(6, x, y, &dot);
  caffe_gpu_asum<float>(6, y, &asum);
  EXPECT_EQ(dot, 19);
  EXPECT_EQ(asum, 9);
  EXPECT_EQ(other.data_at(0, 0, 1, 2), 3);
  caffe_gpu_memset(6 * sizeof(float), 0, y);
  EXPECT_EQ(other.asum_data(), 0);
}

TEST_P(CaffeCompatTest, ProtoHelpersAndTypes) {
  Blob<double> blob(vector<int>{2, 2});
  blob.mutable_cpu_data()[3] = 0.25;
  BlobProto proto;
  blob.ToProto(&proto);
  string path = ::testing::TempDir() + "/compat.binaryproto";
  WriteProtoToBinaryFile(proto, path);
  BlobProto back;
  ASSERT_TRUE(ReadProtoFromBinaryFile(path, &back));
  EXPECT_EQ(back.double_data(3), 0.25);
  BlobShape shape;
  shape.add_dim(4);
  blob.Reshape(shape);
  EXPECT_EQ(blob.count(), 4);
  EXPECT_EQ(kMaxBlobAxes, 32);
  SyncedMemory mem(8);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
}

// The rest of caffe/util/math_functions.hpp's level-1 helpers, on host pointers and on
// the active device's handles.
TEST_P(CaffeCompatTest, SetScaleAxpby) {
  vector<float> x{1, -2, 3}, y(3);
  caffe_set<float>(3, 2.5f, y.data());
  EXPECT_EQ(y, (vector<float>{2.5f, 2.5f, 2.5f}));
  caffe_cpu_scale<float>(3, 2.0f, x.data(), y.data());
  EXPECT_EQ(y, (vector<float>{2, -4, 6}));
  caffe_cpu_axpby<float>(3, 1.0f, x.data(), 0.5f, y.data());
  EXPECT_EQ(y, (vector<float>{2, -4, 6}));

  Blob<double> a(Shape{5}), b(Shape{5});
  caffe_gpu_set<double>(5, 3.0, a.mutable_gpu_data());
  EXPECT_EQ(a.cpu_data()[4], 3.0);
  caffe_gpu_set<double>(5, 0.0, b.mutable_gpu_data());
  EXPECT_EQ(b.asum_data(), 0.0);
  caffe_gpu_scale<double>(5, -2.0, a.gpu_data(), b.mutable_gpu_data());
  EXPECT_EQ(b.cpu_data()[0], -6.0);
  caffe_gpu_axpby<double>(5, 1.0, a.gpu_data(), 2.0, b.mutable_gpu_data());  // b = a + 2b = -9
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.cpu_data()[i], -9.0);
}

// Caffe's TestGPURead / TestGPUWrite pattern: caffe_gpu_memcpy in every direction.
TEST_P(CaffeCompatTest, GpuMemcpyInEveryDirection) {
  SyncedMemory mem(10), other(10);
  caffe_memset(mem.size(), 1, mem.mutable_cpu_data());
  const void* gpu = mem.gpu_data();
  char host[10] = {0};
  caffe_gpu_memcpy(10, gpu, host);  // device to host
  for (char c : host) EXPECT_EQ(c, 1);
  std::memset(host, 2, 10);
  caffe_gpu_memcpy(10, host, other.mutable_gpu_data());  // host to device
  EXPECT_EQ(static_cast<const char*>(other.cpu_data())[9], 2);
  caffe_gpu_memcpy(10, mem.gpu_data(), other.mutable_gpu_data());  // device to device
  EXPECT_EQ(static_cast<const char*>(other.cpu_data())[0], 1);
  char copy[10] = {0};
  caffe_gpu_memcpy(10, host, copy);  // host to host
  EXPECT_EQ(copy[5], 2);
}

// Caffe's int signatures through the compat header; too large a value throws.
TEST_P(CaffeCompatTest, IntAccessorsHaveCaffesSignatures) {
  Blob<float> blob(2, 3, 4, 5);
  EXPECT_EQ(std::min(blob.count(), 10), 10);  // needs int, as in Caffe code
  int (Blob<float>::*count)() const = &Blob<float>::count;
  int (Blob<float>::*offset)(const int, const int, const int, const int) const = &Blob<float>::offset;
  EXPECT_EQ((blob.*count)(), 120);
  EXPECT_EQ((blob.*offset)(1, 2, 3, 4), 119);
  EXPECT_EQ(blob.count(1), 60);
  EXPECT_EQ(blob.count(1, 3), 12);
  EXPECT_EQ(blob.offset(vector<int>{1, 0}), 60);
  blobrt::Blob<float>& base = blob;  // still a blobrt::Blob
  EXPECT_EQ(base.count(), 120);
  Blob<float> huge(vector<int>{1 << 16, 1 << 16});  // 2^32 elements, never touched
  EXPECT_EQ(static_cast<const blobrt::Blob<float>&>(huge).count(), std::int64_t(1) << 32);
  try {
    (void)huge.count();
    ADD_FAILURE() << "count() of 2^32 elements fitted an int";
  } catch (const blobrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("count() is 4294967296, more than Caffe's int"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)huge.offset(1 << 15, 0), blobrt::Error);
  EXPECT_EQ(huge.count(1), 1 << 16);
}

TEST_P(CaffeCompatTest, MallocHostAndFree) {
  void* ptr = nullptr;
  bool use_cuda = true;
  CaffeMallocHost(&ptr, 1000, &use_cuda);
  ASSERT_NE(ptr, nullptr);
  std::memset(ptr, 7, 1000);
  CaffeFreeHost(ptr, use_cuda);
  CaffeMallocHost(&ptr, 0, &use_cuda);
  CaffeFreeHost(ptr, use_cuda);
}

// A device that hands out page-locked host memory and counts what it is given back: only
// what it gave out, or the test fails.
class PinnedHostDevice final : public blobrt::Device {
 public:
  const blobrt::DeviceDescription& description() const noexcept override { return description_; }
  blobrt::DeviceBuffer allocate(std::size_t bytes) override { return new char[bytes]; }
  void release(blobrt::DeviceBuffer buffer) noexcept override { delete[] static_cast<char*>(buffer); }
  void* allocate_host(std::size_t bytes) override {
    void* pointer = std::malloc(bytes);
    given_.insert(pointer);
    return pointer;
  }
  void release_host(void* pointer) noexcept override {
    if (given_.erase(pointer)) {
      std::free(pointer);
    } else {
      ++foreign;
    }
  }
  void copy_to_device(const void*, blobrt::DeviceBuffer, std::size_t, std::size_t) override {}
  void copy_to_host(blobrt::ConstDeviceBuffer, std::size_t, void*, std::size_t) override {}
  void copy_device(blobrt::ConstDeviceBuffer, std::size_t, blobrt::DeviceBuffer, std::size_t, std::size_t) override {}
  void memset(blobrt::DeviceBuffer, std::size_t, int, std::size_t) override {}
  void synchronize() override {}
  void axpy(blobrt::Precision, std::int64_t, double, blobrt::ConstDeviceBuffer, std::int64_t, blobrt::DeviceBuffer,
            std::int64_t) override {}
  double dot(blobrt::Precision, std::int64_t, blobrt::ConstDeviceBuffer, std::int64_t, blobrt::ConstDeviceBuffer,
             std::int64_t) override {
    return 0;
  }
  double asum(blobrt::Precision, std::int64_t, blobrt::ConstDeviceBuffer, std::int64_t) override { return 0; }
  void scal(blobrt::Precision, std::int64_t, double, blobrt::DeviceBuffer, std::int64_t) override {}

  std::size_t outstanding() const { return given_.size(); }
  int foreign = 0;

 private:
  std::set<void*> given_;
  blobrt::DeviceDescription description_;
};

// CaffeFreeHost used to give page-locked memory to the thread's current device, not to the
// device that allocated it: a thread that changed device in between handed that device a
// pointer it never gave out (CUDA: cudaFreeHost on another context's memory). It goes back
// to its own device; a pointer no device gave out is an error, not a guess.
TEST(CaffePinnedHost, FreedByTheDeviceThatAllocatedIt) {
  auto first = std::make_shared<PinnedHostDevice>();
  auto second = std::make_shared<PinnedHostDevice>();
  void* a = caffe::pinned_host_detail::allocate(first, 256);
  void* b = caffe::pinned_host_detail::allocate(second, 128);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(caffe::pinned_host_detail::allocate(first, 0), nullptr);
  // Freed in the other order, as if the current device had switched in between.
  caffe::pinned_host_detail::release(b);
  caffe::pinned_host_detail::release(a);
  EXPECT_EQ(first->outstanding(), 0u);
  EXPECT_EQ(second->outstanding(), 0u);
  EXPECT_EQ(first->foreign + second->foreign, 0);
  int local = 0;
  EXPECT_THROW(caffe::pinned_host_detail::release(&local), blobrt::Error);
  EXPECT_THROW(caffe::pinned_host_detail::release(a), blobrt::Error) << "freed twice";
}

// Caffe instantiates Blob<int> and Blob<unsigned int> (labels, indices; SSD's Caffe Blob<bool> too): storage, shapes,
// sharing and FromProto work; math and ToProto fail clearly, as Caffe's NOT_IMPLEMENTED.
TEST_P(CaffeCompatTest, IntegerBlobs) {
  Blob<int> labels(2, 1, 1, 3);
  int* p = labels.mutable_cpu_data();
  for (int i = 0; i < 6; ++i) p[i] = i - 2;
  EXPECT_EQ(labels.data_at(1, 0, 0, 2), 3);
  Blob<int> view(Shape{6});
  view.ShareData(labels);
  EXPECT_EQ(view.cpu_data()[5], 3);
  labels.mutable_gpu_data();
  EXPECT_EQ(labels.cpu_data()[0], -2);
  Blob<int> copy;
  copy.CopyFrom(labels, false, true);
  EXPECT_EQ(copy.cpu_data()[4], 2);
  Blob<unsigned int> indices(Shape{3});
  BlobProto proto;
  proto.mutable_shape()->add_dim(3);
  for (float v : {4.0f, 5.0f, 6.0f}) proto.add_data(v);
  indices.FromProto(proto);
  EXPECT_EQ(indices.cpu_data()[2], 6u);
  for (auto call : {+[](Blob<int>& b) { b.Update(); }, +[](Blob<int>& b) { b.asum_data(); },
                    +[](Blob<int>& b) { b.sumsq_diff(); }, +[](Blob<int>& b) { b.scale_data(2); }}) {
    try {
      call(labels);
      ADD_FAILURE() << "math on Blob<int> succeeded";
    } catch (const blobrt::Error& e) {
      EXPECT_NE(std::string(e.what()).find("no math on integer blobs"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(indices.ToProto(&proto), blobrt::Error);
  EXPECT_THROW(indices.Update(), blobrt::Error);
  // SSD's Caffe keeps 0/1 tables in Blob<bool> (its overlaps): written on the device, read on the host.
  Blob<bool> overlapped(1, 1, 2, 2);
  const bool marks[4] = {false, true, true, false};
  blobrt::current_device()->copy_to_device(marks, overlapped.mutable_gpu_data(), 0, sizeof marks);
  EXPECT_TRUE(overlapped.cpu_data()[1]);
  EXPECT_FALSE(overlapped.cpu_data()[3]);
  EXPECT_THROW(overlapped.asum_data(), blobrt::Error);
}

TEST_P(CaffeCompatTest, BlobProtoVectorRoundTrips) {
  BlobProtoVector vec;
  Blob<float> mean(1, 3, 2, 2);
  for (int i = 0; i < 12; ++i) mean.mutable_cpu_data()[i] = static_cast<float>(i);
  mean.ToProto(vec.add_blobs());
  mean.ToProto(vec.add_blobs(), true);
  std::string path = ::testing::TempDir() + "/blobrt_compat_vector.binaryproto";
  WriteProtoToBinaryFile(vec, path);
  BlobProtoVector back;
  ASSERT_TRUE(ReadProtoFromBinaryFile(path, &back));
  ASSERT_EQ(back.blobs_size(), 2);
  Blob<float> again;
  again.FromProto(back.blobs(1));
  EXPECT_EQ(again.data_at(0, 2, 1, 1), 11);
}

INSTANTIATE_ON_EVERY_DEVICE(CaffeCompatTest);

}  // namespace
