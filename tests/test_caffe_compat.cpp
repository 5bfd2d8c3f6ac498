// Code written against Caffe compiles with only the include changed, and the math
// helpers agree with Blob's own on host pointers and on device handles.
#include <gtest/gtest.h>

#include "backend_param.hpp"
#include "blobrt/caffe_compat.hpp"

namespace {

using namespace caffe;  // as Caffe code does

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

INSTANTIATE_ON_EVERY_DEVICE(CaffeCompatTest);

}  // namespace
