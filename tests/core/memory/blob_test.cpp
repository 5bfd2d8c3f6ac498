// Caffe's test_blob (shapes, legacy shape rules, math with the head on host and on
// device) and more: offsets, CopyFrom, Update, sharing, 64-bit counts, every error path.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend_param.hpp"
#include "blobrt/blob.hpp"

namespace blobrt {
namespace {

using Shape = std::vector<int>;

class BlobTest : public testing::OnEveryDevice {};

template <typename Dtype>
void fill_uniform(Blob<Dtype>& blob, Dtype lo, Dtype hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Dtype* data = blob.mutable_cpu_data();
  for (std::int64_t i = 0; i < blob.count(); ++i) data[i] = static_cast<Dtype>(dist(gen));
}

// Moves the head of data (or diff) to the side the math should run on.
template <typename Dtype>
void touch(Blob<Dtype>& blob, bool on_device, bool diff) {
  if (diff) {
    on_device ? (void)blob.mutable_gpu_diff() : (void)blob.mutable_cpu_diff();
  } else {
    on_device ? (void)blob.mutable_gpu_data() : (void)blob.mutable_cpu_data();
  }
}

TEST_P(BlobTest, TestInitialization) {
  Blob<float> blob;
  Blob<float> preshaped(2, 3, 4, 5);
  EXPECT_EQ(preshaped.num(), 2);
  EXPECT_EQ(preshaped.channels(), 3);
  EXPECT_EQ(preshaped.height(), 4);
  EXPECT_EQ(preshaped.width(), 5);
  EXPECT_EQ(preshaped.count(), 120);
  EXPECT_EQ(blob.num_axes(), 0);
  EXPECT_EQ(blob.count(), 0);
  EXPECT_EQ(blob.shape_string(), "(0)");
  EXPECT_EQ(preshaped.shape_string(), "2 3 4 5 (120)");
  Blob<double> from_vector(Shape{7, 1, 3});
  EXPECT_EQ(from_vector.count(), 21);
  EXPECT_EQ(from_vector.num_axes(), 3);
}

TEST_P(BlobTest, TestPointersCPUGPU) {
  Blob<float> preshaped(2, 3, 4, 5);
  EXPECT_TRUE(preshaped.gpu_data());
  EXPECT_TRUE(preshaped.cpu_data());
  EXPECT_TRUE(preshaped.mutable_gpu_data());
  EXPECT_TRUE(preshaped.mutable_cpu_data());
  EXPECT_TRUE(preshaped.gpu_diff());
  EXPECT_TRUE(preshaped.cpu_diff());
  EXPECT_TRUE(preshaped.mutable_gpu_diff());
  EXPECT_TRUE(preshaped.mutable_cpu_diff());
  std::vector<int> shape_back(4);
  device().copy_to_host(preshaped.gpu_shape(), 0, shape_back.data(), 4 * sizeof(int));
  EXPECT_EQ(shape_back, (Shape{2, 3, 4, 5}));
}

TEST_P(BlobTest, TestReshape) {
  Blob<float> blob;
  blob.Reshape(2, 3, 4, 5);
  EXPECT_EQ(blob.num(), 2);
  EXPECT_EQ(blob.channels(), 3);
  EXPECT_EQ(blob.height(), 4);
  EXPECT_EQ(blob.width(), 5);
  EXPECT_EQ(blob.count(), 120);
}

TEST_P(BlobTest, TestReshapeZero) {
  Blob<float> blob;
  blob.Reshape(Shape{0, 5});
  EXPECT_EQ(blob.count(), 0);
  EXPECT_EQ(blob.asum_data(), 0);
}

TEST_P(BlobTest, ReshapeFromBlobShapeAndLike) {
  BlobShape shape;
  shape.add_dim(3);
  shape.add_dim(4);
  Blob<float> a;
  a.Reshape(shape);
  EXPECT_EQ(a.shape(), (Shape{3, 4}));
  Blob<float> b;
  b.ReshapeLike(a);
  EXPECT_EQ(b.shape(), a.shape());
  BlobShape too_big;
  too_big.add_dim(static_cast<std::int64_t>(INT_MAX) + 1);
  EXPECT_THROW(a.Reshape(too_big), Error);
  EXPECT_EQ(a.shape(), (Shape{3, 4}));  // unchanged after the error
}

TEST_P(BlobTest, CapacityIsKeptWhenShrinking) {
  Blob<float> blob(Shape{10, 10});
  const float* before = blob.cpu_data();
  blob.Reshape(Shape{5, 5});
  EXPECT_EQ(blob.count(), 25);
  EXPECT_EQ(blob.cpu_data(), before);  // same allocation
  blob.Reshape(Shape{10, 10});
  EXPECT_EQ(blob.cpu_data(), before);  // still within capacity
  blob.Reshape(Shape{11, 10});
  EXPECT_EQ(blob.count(), 110);  // grew: a new allocation of the new size
  EXPECT_EQ(blob.data()->size(), 110 * sizeof(float));
}

TEST_P(BlobTest, TestLegacyBlobProtoShapeEquals) {
  Blob<float> blob;
  BlobProto blob_proto;
  Shape shape{3, 2};
  blob.Reshape(shape);
  // (3 x 2) blob == (1 x 1 x 3 x 2) legacy blob
  blob_proto.set_num(1);
  blob_proto.set_channels(1);
  blob_proto.set_height(3);
  blob_proto.set_width(2);
  EXPECT_TRUE(blob.ShapeEquals(blob_proto));
  // (3 x 2) blob != (0 x 1 x 3 x 2) legacy blob
  blob_proto.set_num(0);
  EXPECT_FALSE(blob.ShapeEquals(blob_proto));
  // (3 x 2) blob != (3 x 1 x 3 x 2) legacy blob
  blob_proto.set_num(3);
  EXPECT_FALSE(blob.ShapeEquals(blob_proto));
  // Reshape to (1 x 3 x 2): == (1 x 1 x 3 x 2) legacy blob
  shape.insert(shape.begin(), 1);
  blob.Reshape(shape);
  blob_proto.set_num(1);
  EXPECT_TRUE(blob.ShapeEquals(blob_proto));
  // Reshape to (2 x 3 x 2): != (1 x 1 x 3 x 2) legacy blob
  shape[0] = 2;
  blob.Reshape(shape);
  EXPECT_FALSE(blob.ShapeEquals(blob_proto));
  // 5 axes never equal a legacy shape.
  blob.Reshape(Shape{1, 1, 1, 3, 2});
  EXPECT_FALSE(blob.ShapeEquals(blob_proto));
  // Modern shapes compare axis by axis.
  BlobProto modern;
  for (int d : {1, 1, 1, 3, 2}) modern.mutable_shape()->add_dim(d);
  EXPECT_TRUE(blob.ShapeEquals(modern));
  modern.mutable_shape()->set_dim(4, 3);
  EXPECT_FALSE(blob.ShapeEquals(modern));
}

TEST_P(BlobTest, ShapeAccessorsAndNegativeAxes) {
  Blob<float> blob(Shape{2, 3, 4, 5, 6});
  EXPECT_EQ(blob.shape(0), 2);
  EXPECT_EQ(blob.shape(-1), 6);
  EXPECT_EQ(blob.shape(-5), 2);
  EXPECT_EQ(blob.CanonicalAxisIndex(-2), 3);
  EXPECT_EQ(blob.count(1), 3 * 4 * 5 * 6);
  EXPECT_EQ(blob.count(1, 3), 12);
  EXPECT_EQ(blob.count(2, 2), 1);
  EXPECT_EQ(blob.count(0, 5), 720);
  EXPECT_THROW(blob.count(3, 2), Error);
  EXPECT_THROW(blob.count(0, 6), Error);
  EXPECT_THROW(blob.count(-1, 2), Error);
  try {
    blob.shape(5);
    ADD_FAILURE() << "shape(5) did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "axis 5 out of range for 5-D Blob with shape 2 3 4 5 6 (720)");
  }
  EXPECT_THROW(blob.shape(-6), Error);
  EXPECT_THROW(blob.num(), Error);  // legacy accessors need <= 4 axes
}

TEST_P(BlobTest, LegacyAccessorsPadWithOnes) {
  Blob<float> blob(Shape{7, 3});
  EXPECT_EQ(blob.num(), 7);
  EXPECT_EQ(blob.channels(), 3);
  EXPECT_EQ(blob.height(), 1);
  EXPECT_EQ(blob.width(), 1);
  EXPECT_EQ(blob.LegacyShape(-1), 3);
  EXPECT_EQ(blob.LegacyShape(-3), 1);
  EXPECT_THROW(blob.LegacyShape(4), Error);
  EXPECT_THROW(blob.LegacyShape(-5), Error);
}

TEST_P(BlobTest, OffsetsAndElementAccess) {
  Blob<float> blob(2, 3, 4, 5);
  float* data = blob.mutable_cpu_data();
  float* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < 120; ++i) {
    data[i] = static_cast<float>(i);
    diff[i] = static_cast<float>(-i);
  }
  EXPECT_EQ(blob.offset(1, 2, 3, 4), 119);
  EXPECT_EQ(blob.offset(1), 60);
  EXPECT_EQ(blob.offset(Shape{1, 2, 3, 4}), 119);
  EXPECT_EQ(blob.offset(Shape{1, 1}), 80);
  EXPECT_EQ(blob.data_at(1, 0, 2, 1), 71);
  EXPECT_EQ(blob.diff_at(1, 0, 2, 1), -71);
  EXPECT_EQ(blob.data_at(Shape{0, 2, 1, 3}), 48);
  EXPECT_EQ(blob.diff_at(Shape{0, 2, 1, 3}), -48);
  EXPECT_THROW(blob.offset(-1), Error);
  EXPECT_THROW(blob.offset(0, 4), Error);
  EXPECT_THROW(blob.offset(Shape{0, 3}), Error);
  EXPECT_THROW(blob.offset(Shape{0, 0, 0, 0, 0}), Error);
  // Caffe's offset() allows one past the end; reading there is refused.
  EXPECT_EQ(blob.offset(2), 120);
  EXPECT_THROW(blob.data_at(2, 0, 0, 0), Error);
}

TEST_P(BlobTest, OffsetsAre64Bit) {
  // Shapes beyond INT_MAX elements are accepted without allocating (lazy).
  Blob<float> big(Shape{3, 1 << 30});
  EXPECT_EQ(big.count(), 3LL << 30);
  EXPECT_EQ(big.offset(2, 1 << 29), (2LL << 30) + (1 << 29));
  EXPECT_EQ(big.count(1), 1LL << 30);
  EXPECT_NO_THROW(Blob<float>(Shape{1 << 16, 1 << 16}));
}

TEST_P(BlobTest, ReshapeErrorsNameTheValues) {
  Blob<float> blob;
  try {
    blob.Reshape(Shape{2, -3});
    ADD_FAILURE() << "negative dimension accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 1 is -3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(blob.Reshape(Shape(33, 1)), Error);
  EXPECT_NO_THROW(blob.Reshape(Shape(32, 1)));
  EXPECT_THROW(blob.Reshape(Shape{INT_MAX, INT_MAX, INT_MAX, INT_MAX}), Error);
}

TEST_P(BlobTest, DefaultBlobHasNoMemory) {
  Blob<float> blob;
  EXPECT_THROW(blob.cpu_data(), Error);
  EXPECT_THROW(blob.mutable_gpu_diff(), Error);
  EXPECT_THROW(blob.gpu_shape(), Error);
  EXPECT_THROW(blob.Update(), Error);
  EXPECT_EQ(blob.asum_data(), 0);
  EXPECT_EQ(blob.sumsq_diff(), 0);
  EXPECT_NO_THROW(blob.scale_data(2));
}

template <typename Dtype>
void check_sum_of_squares(bool on_device) {
  const Dtype epsilon = sizeof(Dtype) == 4 ? 1e-5 : 1e-10;
  Blob<Dtype> blob(2, 3, 4, 5);
  EXPECT_EQ(0, blob.sumsq_data());  // uninitialised
  EXPECT_EQ(0, blob.sumsq_diff());
  fill_uniform<Dtype>(blob, -3, 3, 1);
  Dtype expected_sumsq = 0;
  const Dtype* data = blob.cpu_data();
  for (int i = 0; i < blob.count(); ++i) expected_sumsq += data[i] * data[i];
  touch(blob, on_device, false);
  EXPECT_NEAR(expected_sumsq, blob.sumsq_data(), epsilon * expected_sumsq);
  EXPECT_EQ(0, blob.sumsq_diff());
  const Dtype kDiffScaleFactor = 7;
  Dtype* diff = blob.mutable_cpu_diff();
  data = blob.cpu_data();
  for (int i = 0; i < blob.count(); ++i) diff[i] = kDiffScaleFactor * data[i];
  touch(blob, on_device, true);
  EXPECT_NEAR(expected_sumsq, blob.sumsq_data(), epsilon * expected_sumsq);
  const Dtype expected_sumsq_diff = expected_sumsq * kDiffScaleFactor * kDiffScaleFactor;
  EXPECT_NEAR(expected_sumsq_diff, blob.sumsq_diff(), epsilon * expected_sumsq_diff);
}

template <typename Dtype>
void check_asum(bool on_device) {
  const Dtype epsilon = sizeof(Dtype) == 4 ? 1e-5 : 1e-10;
  Blob<Dtype> blob(2, 3, 4, 5);
  EXPECT_EQ(0, blob.asum_data());
  EXPECT_EQ(0, blob.asum_diff());
  fill_uniform<Dtype>(blob, -3, 3, 2);
  Dtype expected_asum = 0;
  const Dtype* data = blob.cpu_data();
  for (int i = 0; i < blob.count(); ++i) expected_asum += std::fabs(data[i]);
  touch(blob, on_device, false);
  EXPECT_NEAR(expected_asum, blob.asum_data(), epsilon * expected_asum);
  EXPECT_EQ(0, blob.asum_diff());
  const Dtype kDiffScaleFactor = 7;
  Dtype* diff = blob.mutable_cpu_diff();
  data = blob.cpu_data();
  for (int i = 0; i < blob.count(); ++i) diff[i] = kDiffScaleFactor * data[i];
  touch(blob, on_device, true);
  EXPECT_NEAR(expected_asum, blob.asum_data(), epsilon * expected_asum);
  const Dtype expected_diff_asum = expected_asum * kDiffScaleFactor;
  EXPECT_NEAR(expected_diff_asum, blob.asum_diff(), epsilon * expected_diff_asum);
}

template <typename Dtype>
void check_scale(bool on_device) {
  const Dtype epsilon = sizeof(Dtype) == 4 ? 1e-5 : 1e-10;
  Blob<Dtype> blob(2, 3, 4, 5);
  EXPECT_EQ(0, blob.asum_data());
  EXPECT_EQ(0, blob.asum_diff());
  fill_uniform<Dtype>(blob, -3, 3, 3);
  const Dtype asum_before_scale = blob.asum_data();
  touch(blob, on_device, false);
  const Dtype kDataScaleFactor = 3;
  blob.scale_data(kDataScaleFactor);
  EXPECT_NEAR(asum_before_scale * kDataScaleFactor, blob.asum_data(),
              epsilon * asum_before_scale * kDataScaleFactor);
  EXPECT_EQ(0, blob.asum_diff());
  const Dtype kDataToDiffScaleFactor = 7;
  const Dtype* data = blob.cpu_data();
  Dtype* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < blob.count(); ++i) diff[i] = kDataToDiffScaleFactor * data[i];
  const Dtype expected_asum_before_scale = asum_before_scale * kDataScaleFactor;
  EXPECT_NEAR(expected_asum_before_scale, blob.asum_data(), epsilon * expected_asum_before_scale);
  const Dtype expected_diff_asum_before_scale = expected_asum_before_scale * kDataToDiffScaleFactor;
  EXPECT_NEAR(expected_diff_asum_before_scale, blob.asum_diff(),
              epsilon * expected_diff_asum_before_scale);
  touch(blob, on_device, true);
  const Dtype kDiffScaleFactor = 3;
  blob.scale_diff(kDiffScaleFactor);
  EXPECT_NEAR(expected_asum_before_scale, blob.asum_data(), epsilon * expected_asum_before_scale);
  const Dtype expected_diff_asum = expected_diff_asum_before_scale * kDiffScaleFactor;
  EXPECT_NEAR(expected_diff_asum, blob.asum_diff(), epsilon * expected_diff_asum);
}

TEST_P(BlobTest, TestSumOfSquares) {
  for (bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "head at device" : "head at host");
    check_sum_of_squares<float>(on_device);
    check_sum_of_squares<double>(on_device);
  }
}

TEST_P(BlobTest, TestAsum) {
  for (bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "head at device" : "head at host");
    check_asum<float>(on_device);
    check_asum<double>(on_device);
  }
}

TEST_P(BlobTest, TestScaleData) {
  for (bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "head at device" : "head at host");
    check_scale<float>(on_device);
    check_scale<double>(on_device);
  }
}

template <typename Dtype>
void check_update(bool on_device) {
  Blob<Dtype> blob(1, 2, 3, 4);
  Dtype* data = blob.mutable_cpu_data();
  Dtype* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < 24; ++i) {
    data[i] = static_cast<Dtype>(i);
    diff[i] = static_cast<Dtype>(23 - i);
  }
  touch(blob, on_device, false);
  blob.Update();
  EXPECT_EQ(blob.data()->head(), on_device ? SyncedMemory::HEAD_AT_GPU : SyncedMemory::HEAD_AT_CPU);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(blob.cpu_data()[i], static_cast<Dtype>(2 * i - 23));
  EXPECT_EQ(blob.asum_data(), 288);  // the seeds' demo figures
  EXPECT_EQ(blob.sumsq_data(), 4600);
}

TEST_P(BlobTest, UpdateOnHostAndDevice) {
  for (bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "head at device" : "head at host");
    check_update<float>(on_device);
    check_update<double>(on_device);
  }
  Blob<float> untouched(2, 2, 2, 2);
  EXPECT_THROW(untouched.Update(), Error);  // "Syncedmem not initialized."
}

TEST_P(BlobTest, CopyFrom) {
  for (bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "source head at device" : "source head at host");
    Blob<float> source(2, 3, 4, 5);
    fill_uniform<float>(source, -1, 1, 4);
    float* sdiff = source.mutable_cpu_diff();
    for (int i = 0; i < 120; ++i) sdiff[i] = static_cast<float>(i);
    touch(source, on_device, false);
    touch(source, on_device, true);
    Blob<float> target(2, 3, 4, 5);
    target.CopyFrom(source);
    target.CopyFrom(source, true);
    for (int i = 0; i < 120; ++i) {
      ASSERT_EQ(target.cpu_data()[i], source.cpu_data()[i]);
      ASSERT_EQ(target.cpu_diff()[i], static_cast<float>(i));
    }
    Blob<float> other(Shape{4});
    try {
      other.CopyFrom(source);
      ADD_FAILURE() << "copy between different shapes without reshape";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("2 3 4 5 (120)"), std::string::npos) << e.what();
    }
    other.CopyFrom(source, false, true);
    EXPECT_EQ(other.shape(), source.shape());
    EXPECT_EQ(other.data_at(1, 2, 3, 4), source.data_at(1, 2, 3, 4));
  }
}

TEST_P(BlobTest, ShareDataAndDiff) {
  Blob<float> a(2, 3, 4, 5), b(Shape{120}), c(Shape{7});
  a.mutable_cpu_data()[5] = 42;
  b.ShareData(a);
  EXPECT_EQ(b.data(), a.data());
  EXPECT_EQ(b.cpu_data()[5], 42);
  b.ShareDiff(a);
  EXPECT_EQ(b.diff(), a.diff());
  EXPECT_THROW(c.ShareData(a), Error);
  EXPECT_THROW(c.ShareDiff(a), Error);
}

// Caffe's Net shares a layer's top with the next bottom and reshapes both every pass: a
// shrinking Reshape must keep the sharing, even of memory no one has written yet.
TEST_P(BlobTest, SharingSurvivesAShrinkingReshape) {
  for (bool written : {false, true}) {
    Blob<float> a(Shape{6}), b(Shape{6});
    if (written) a.mutable_cpu_data()[0] = 1;
    b.ShareData(a);
    b.ShareDiff(a);
    b.Reshape(Shape{3});
    EXPECT_EQ(b.data(), a.data()) << "written " << written;
    EXPECT_EQ(b.diff(), a.diff()) << "written " << written;
    a.mutable_cpu_data()[2] = 7;
    EXPECT_EQ(b.cpu_data()[2], 7);
  }
}

// Caffe issue #5439: memory taken from a smaller blob (or from the user) and a growing
// Reshape within capacity_ wrote past the end. blobrt reallocates.
TEST_P(BlobTest, GrowingReshapeAfterSharingReallocates) {
  Blob<float> small(Shape{2}), big(Shape{8});
  big.Reshape(Shape{2});
  big.ShareData(small);
  big.ShareDiff(small);
  big.Reshape(Shape{8});
  EXPECT_NE(big.data(), small.data());
  EXPECT_GE(big.data()->size(), 8 * sizeof(float));
  EXPECT_GE(big.diff()->size(), 8 * sizeof(float));
  float* p = big.mutable_cpu_data();
  for (int i = 0; i < 8; ++i) p[i] = 1;  // ASan and valgrind see any write past small's 2
  big.mutable_gpu_diff();
  EXPECT_FLOAT_EQ(big.asum_data(), 8);

  std::vector<float> given(2, 3.0f);
  big.Reshape(Shape{2});
  big.set_cpu_data(given.data());
  big.Reshape(Shape{8});
  EXPECT_NE(big.cpu_data(), given.data());
  EXPECT_GE(big.data()->size(), 8 * sizeof(float));
  big.mutable_cpu_data()[7] = 1;
  EXPECT_EQ(given, std::vector<float>(2, 3.0f));
}

// libblobrt-dist re-points a diff at a view of exactly count() elements of a larger buffer
// (SyncedMemory::set_gpu_data with a size). A Reshape that grows past the view (still
// within capacity_) must give the diff fresh memory, leave the rest of that buffer alone
// and keep the data's values.
TEST_P(BlobTest, GrowingPastASizedViewGetsAFreshDiffAndKeepsTheData) {
  const DeviceDescription& d = device().description();
  if (d.view_alignment == 0) GTEST_SKIP() << d.id() << " offers no views";
  std::shared_ptr<Device> dev = current_device();
  Blob<float> blob(Shape{100});
  float* data = blob.mutable_cpu_data();
  for (int i = 0; i < 100; ++i) data[i] = static_cast<float>(i);
  blob.Reshape(Shape{16});
  // 16 floats of view, then 100 floats of guard, all -1.
  const std::size_t whole_bytes = 116 * sizeof(float);
  DeviceBuffer whole = dev->allocate(whole_bytes);
  std::vector<float> guard(116, -1.f);
  dev->copy_to_device(guard.data(), whole, 0, whole_bytes);
  DeviceBuffer view = dev->view(whole, 0, 16 * sizeof(float));
  auto owner = std::shared_ptr<void>(whole, [dev, view](void* buffer) {
    dev->release_view(view);
    dev->release(buffer);
  });
  blob.diff()->set_gpu_data(view, owner, 16 * sizeof(float));
  EXPECT_EQ(blob.diff()->size(), 16 * sizeof(float));
  blob.Reshape(Shape{100});
  EXPECT_GE(blob.diff()->size(), 100 * sizeof(float));
  float* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < 100; ++i) diff[i] = 7.f;
  blob.gpu_diff();  // any write-back to the device happens now
  std::vector<float> back(116, 0.f);
  dev->copy_to_host(whole, 0, back.data(), whole_bytes);
  int overwritten = 0;
  for (int i = 16; i < 116; ++i) overwritten += back[i] != -1.f;
  EXPECT_EQ(overwritten, 0) << "values past the view written by the grown blob";
  EXPECT_EQ(blob.cpu_data()[99], 99.f) << "the data was big enough and keeps its values";
  EXPECT_FLOAT_EQ(blob.asum_diff(), 700.f);
}

TEST_P(BlobTest, SetCpuAndGpuData) {
  Blob<float> blob(Shape{8});
  std::vector<float> external(8, 2.5f);
  blob.set_cpu_data(external.data());
  EXPECT_EQ(blob.cpu_data(), external.data());
  EXPECT_FLOAT_EQ(blob.asum_data(), 20);
  EXPECT_THROW(blob.set_cpu_data(nullptr), Error);

  DeviceBuffer handle = device().allocate(8 * sizeof(float));
  std::vector<float> ones(8, 1.0f);
  device().copy_to_device(ones.data(), handle, 0, 8 * sizeof(float));
  blob.set_gpu_data(static_cast<float*>(handle));
  EXPECT_EQ(blob.gpu_data(), handle);
  EXPECT_FLOAT_EQ(blob.asum_data(), 8);
  EXPECT_FLOAT_EQ(blob.cpu_data()[3], 1.0f);
  blob.Reshape(Shape{2});  // shrink then set: sizes of data and diff stay equal
  std::vector<float> two(2, 4.0f);
  blob.set_cpu_data(two.data());
  EXPECT_EQ(blob.data()->size(), blob.diff()->size());
  EXPECT_EQ(blob.data()->size(), 2 * sizeof(float));
  device().release(handle);
}

INSTANTIATE_ON_EVERY_DEVICE(BlobTest);

// A run filtered to some devices' names sees them (tests/meson.build, *_aliased).
TEST(RequestedDevices, ArePresent) { blobrt::testing::expect_requested_devices(); }

}  // namespace
}  // namespace blobrt
