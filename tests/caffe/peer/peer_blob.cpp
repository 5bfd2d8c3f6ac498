// caffe::Blob as Caffe code uses it, as float and double, in Caffe::CPU and Caffe::GPU
// mode: shapes and legacy shape rules against the generated caffe::BlobProto, math with
// the head where the mode puts it (asum, sumsq, scale, Update), sharing, and ToProto /
// FromProto through the generated messages (shape, legacy 4-D fields, double fields,
// diff, the other precision's fields).
#include <cmath>
#include <string>
#include <vector>

#include "peer_test.hpp"

namespace caffe_peer {
namespace {

using caffe::Blob;
using caffe::BlobProto;
using caffe::BlobShape;
using std::vector;

template <typename Param>
class PeerBlobTest : public PeerTest<Param> {
 protected:
  using Dtype = typename Param::Dtype;

  // Values in [-3, 3) through Caffe's generator, written on the host.
  void fill(Blob<Dtype>& blob) {
    caffe::caffe_rng_uniform<Dtype>(blob.count(), Dtype(-3), Dtype(3), blob.mutable_cpu_data());
  }
  // Puts the head of data (or diff) where this mode's code would work on it.
  void move_head(Blob<Dtype>& blob, bool diff) {
    if (this->kGpu) {
      diff ? (void)blob.mutable_gpu_diff() : (void)blob.mutable_gpu_data();
    } else {
      diff ? (void)blob.mutable_cpu_diff() : (void)blob.mutable_cpu_data();
    }
  }
  caffe::SyncedMemory::SyncedHead expected_head() const {
    return this->kGpu ? caffe::SyncedMemory::HEAD_AT_GPU : caffe::SyncedMemory::HEAD_AT_CPU;
  }
  // A relative tolerance fit for a sum of n terms in Dtype.
  static double tol(double value) { return std::abs(value) * (sizeof(Dtype) == 4 ? 1e-5 : 1e-12) + 1e-6; }
};
TYPED_TEST_SUITE(PeerBlobTest, TypesAndModes);

TYPED_TEST(PeerBlobTest, Initialization) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> empty;
  EXPECT_EQ(empty.num_axes(), 0);
  EXPECT_EQ(empty.count(), 0);
  Blob<Dtype> blob(2, 3, 4, 5);
  EXPECT_EQ(blob.num(), 2);
  EXPECT_EQ(blob.channels(), 3);
  EXPECT_EQ(blob.height(), 4);
  EXPECT_EQ(blob.width(), 5);
  EXPECT_EQ(blob.count(), 120);
  EXPECT_EQ(blob.num_axes(), 4);
  EXPECT_EQ(blob.shape_string(), "2 3 4 5 (120)");
  EXPECT_TRUE(blob.cpu_data());
  EXPECT_TRUE(blob.gpu_data());
  EXPECT_TRUE(blob.mutable_cpu_data());
  EXPECT_TRUE(blob.mutable_gpu_data());
  EXPECT_TRUE(blob.cpu_diff());
  EXPECT_TRUE(blob.gpu_diff());
}

TYPED_TEST(PeerBlobTest, ReshapeFromEveryForm) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob;
  blob.Reshape(2, 3, 4, 5);
  EXPECT_EQ(blob.shape(), (vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(blob.count(), 120);
  blob.Reshape(vector<int>{5, 0, 0, 0});
  EXPECT_EQ(blob.count(), 0);
  EXPECT_EQ(blob.num(), 5);
  BlobShape shape;  // the generated message
  shape.add_dim(6);
  shape.add_dim(7);
  blob.Reshape(shape);
  EXPECT_EQ(blob.shape(), (vector<int>{6, 7}));
  EXPECT_EQ(blob.count(1), 7);
  EXPECT_EQ(blob.shape(-1), 7);
  Blob<Dtype> other(vector<int>{1, 2, 3});
  blob.ReshapeLike(other);
  EXPECT_EQ(blob.shape_string(), "1 2 3 (6)");
}

TYPED_TEST(PeerBlobTest, LegacyBlobProtoShapeEquals) {
  using Dtype = typename TypeParam::Dtype;
  BlobProto legacy;
  legacy.set_num(1);
  legacy.set_channels(1);
  legacy.set_height(2);
  legacy.set_width(3);

  // Fewer than four axes compare as if padded with leading ones.
  Blob<Dtype> blob(vector<int>{2, 3});
  EXPECT_TRUE(blob.ShapeEquals(legacy));
  blob.Reshape(vector<int>{1, 1, 2, 3});
  EXPECT_TRUE(blob.ShapeEquals(legacy));
  blob.Reshape(vector<int>{3, 2});
  EXPECT_FALSE(blob.ShapeEquals(legacy));
  blob.Reshape(vector<int>{2, 3, 1, 1});
  EXPECT_FALSE(blob.ShapeEquals(legacy));
  blob.Reshape(vector<int>{1, 1, 1, 2, 3});  // more than four axes never match the 4-D fields
  EXPECT_FALSE(blob.ShapeEquals(legacy));

  legacy.set_num(2);
  legacy.set_channels(3);
  legacy.set_height(1);
  legacy.set_width(1);
  blob.Reshape(vector<int>{2, 3});
  EXPECT_FALSE(blob.ShapeEquals(legacy));
  blob.Reshape(vector<int>{2, 3, 1, 1});
  EXPECT_TRUE(blob.ShapeEquals(legacy));

  // With `shape` instead, the axes must agree exactly.
  BlobProto nd;
  nd.mutable_shape()->add_dim(2);
  nd.mutable_shape()->add_dim(3);
  blob.Reshape(vector<int>{2, 3});
  EXPECT_TRUE(blob.ShapeEquals(nd));
  blob.Reshape(vector<int>{1, 2, 3});
  EXPECT_FALSE(blob.ShapeEquals(nd));
}

TYPED_TEST(PeerBlobTest, AsumAndSumsqWhereTheHeadIs) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob(2, 3, 4, 5);
  // Fresh memory reads as zeros.
  EXPECT_EQ(blob.asum_data(), 0);
  EXPECT_EQ(blob.sumsq_data(), 0);
  EXPECT_EQ(blob.asum_diff(), 0);
  EXPECT_EQ(blob.sumsq_diff(), 0);
  this->fill(blob);
  double asum = 0, sumsq = 0;
  for (int i = 0; i < blob.count(); ++i) {
    asum += std::abs(blob.cpu_data()[i]);
    sumsq += double(blob.cpu_data()[i]) * blob.cpu_data()[i];
  }
  ASSERT_GT(asum, 0);
  this->move_head(blob, false);
  EXPECT_EQ(blob.data()->head(), this->expected_head());
  EXPECT_NEAR(blob.asum_data(), asum, this->tol(asum));
  EXPECT_NEAR(blob.sumsq_data(), sumsq, this->tol(sumsq));
  EXPECT_EQ(blob.asum_diff(), 0);

  // diff = 2 * data, computed where the mode computes (caffe_gpu_scale on device handles).
  if (this->kGpu) {
    caffe::caffe_gpu_scale(blob.count(), Dtype(2), blob.gpu_data(), blob.mutable_gpu_diff());
  } else {
    caffe::caffe_cpu_scale(blob.count(), Dtype(2), blob.cpu_data(), blob.mutable_cpu_diff());
  }
  EXPECT_EQ(blob.diff()->head(), this->expected_head());
  EXPECT_NEAR(blob.asum_diff(), 2 * asum, this->tol(2 * asum));
  EXPECT_NEAR(blob.sumsq_diff(), 4 * sumsq, this->tol(4 * sumsq));
  EXPECT_NEAR(blob.asum_data(), asum, this->tol(asum));
}

TYPED_TEST(PeerBlobTest, ScaleDataAndDiffSeparately) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob(2, 3, 4, 5);
  EXPECT_EQ(blob.asum_data(), 0);
  blob.scale_data(Dtype(3));  // scaling zeros is zeros
  EXPECT_EQ(blob.asum_data(), 0);
  this->fill(blob);
  caffe::caffe_rng_uniform<Dtype>(blob.count(), Dtype(1), Dtype(2), blob.mutable_cpu_diff());
  const vector<Dtype> data(blob.cpu_data(), blob.cpu_data() + blob.count());
  const vector<Dtype> diff(blob.cpu_diff(), blob.cpu_diff() + blob.count());
  const double asum_data = blob.asum_data(), asum_diff = blob.asum_diff();

  const Dtype factor = Dtype(0.25);
  this->move_head(blob, false);
  blob.scale_data(factor);
  EXPECT_EQ(blob.data()->head(), this->expected_head());
  EXPECT_NEAR(blob.asum_data(), asum_data * factor, this->tol(asum_data));
  EXPECT_NEAR(blob.asum_diff(), asum_diff, this->tol(asum_diff));  // untouched
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], data[i] * factor) << i;
    EXPECT_EQ(blob.cpu_diff()[i], diff[i]) << i;
  }

  this->move_head(blob, true);
  blob.scale_diff(Dtype(-2));
  EXPECT_EQ(blob.diff()->head(), this->expected_head());
  EXPECT_NEAR(blob.asum_diff(), 2 * asum_diff, this->tol(2 * asum_diff));
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_diff()[i], diff[i] * Dtype(-2)) << i;
    EXPECT_EQ(blob.cpu_data()[i], data[i] * factor) << i;
  }
}

TYPED_TEST(PeerBlobTest, UpdateSubtractsTheDiffWhereTheDataIs) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob(vector<int>{3, 7});
  this->fill(blob);
  caffe::caffe_rng_uniform<Dtype>(blob.count(), Dtype(-1), Dtype(1), blob.mutable_cpu_diff());
  const vector<Dtype> data(blob.cpu_data(), blob.cpu_data() + blob.count());
  const vector<Dtype> diff(blob.cpu_diff(), blob.cpu_diff() + blob.count());
  this->move_head(blob, false);
  this->move_head(blob, true);
  blob.Update();
  EXPECT_EQ(blob.data()->head(), this->expected_head());
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(blob.cpu_data()[i], data[i] - diff[i]) << i;
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(blob.cpu_diff()[i], diff[i]) << i;
}

TYPED_TEST(PeerBlobTest, ShareDataAndDiff) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(2, 3, 4, 5), b(vector<int>{120});
  this->fill(a);
  b.ShareData(a);
  EXPECT_EQ(b.data(), a.data());
  EXPECT_EQ(b.cpu_data(), a.cpu_data());
  EXPECT_EQ(b.gpu_data(), a.gpu_data());
  EXPECT_NE(b.diff(), a.diff());
  b.ShareDiff(a);
  EXPECT_EQ(b.diff(), a.diff());
  // A write through one is seen through the other, on either side.
  this->move_head(b, false);
  b.scale_data(Dtype(0));
  EXPECT_EQ(a.asum_data(), 0);
  a.mutable_cpu_diff()[119] = Dtype(5);
  EXPECT_EQ(b.cpu_diff()[119], Dtype(5));
  Blob<Dtype> wrong(2, 3, 4, 6);
  EXPECT_THROW(wrong.ShareData(a), blobrt::Error);  // Caffe: CHECK_EQ(count_, other.count())
}

TYPED_TEST(PeerBlobTest, CopyFromWithAndWithoutReshape) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> source(2, 3, 4, 5), target;
  this->fill(source);
  this->move_head(source, false);
  target.CopyFrom(source, false, true);
  EXPECT_EQ(target.shape(), source.shape());
  for (int i = 0; i < source.count(); ++i) EXPECT_EQ(target.cpu_data()[i], source.cpu_data()[i]);
  caffe::caffe_set(source.count(), Dtype(0.5), source.mutable_cpu_diff());
  target.CopyFrom(source, true);
  EXPECT_EQ(target.asum_diff(), Dtype(60));
  Blob<Dtype> other(vector<int>{120});
  EXPECT_THROW(other.CopyFrom(source), blobrt::Error);  // shapes differ and no reshape
}

// ---- ToProto / FromProto through the generated messages ----

TYPED_TEST(PeerBlobTest, ToProtoFillsShapeAndThisPrecisionsFields) {
  using Dtype = typename TypeParam::Dtype;
  const bool is_double = std::is_same<Dtype, double>::value;
  Blob<Dtype> blob(vector<int>{2, 3, 4});
  this->fill(blob);
  caffe::caffe_rng_uniform<Dtype>(blob.count(), Dtype(-1), Dtype(1), blob.mutable_cpu_diff());
  this->move_head(blob, false);  // ToProto reads the values back from wherever they are
  this->move_head(blob, true);

  BlobProto proto;
  blob.ToProto(&proto);
  ASSERT_TRUE(proto.has_shape());
  EXPECT_EQ(proto.shape().dim_size(), 3);
  EXPECT_EQ(proto.shape().dim(2), 4);
  EXPECT_FALSE(proto.has_num());  // ToProto writes `shape`, never the legacy fields
  EXPECT_FALSE(proto.has_width());
  EXPECT_EQ(is_double ? proto.double_data_size() : proto.data_size(), 24);
  EXPECT_EQ(is_double ? proto.data_size() : proto.double_data_size(), 0);
  EXPECT_EQ(proto.diff_size() + proto.double_diff_size(), 0);  // no diff unless asked
  for (int i = 0; i < 24; ++i) {
    EXPECT_EQ(is_double ? proto.double_data(i) : proto.data(i), blob.cpu_data()[i]) << i;
  }

  blob.ToProto(&proto, true);
  EXPECT_EQ(proto.shape().dim_size(), 3);  // replaced, not appended
  EXPECT_EQ(is_double ? proto.double_data_size() : proto.data_size(), 24);
  ASSERT_EQ(is_double ? proto.double_diff_size() : proto.diff_size(), 24);
  for (int i = 0; i < 24; ++i) {
    EXPECT_EQ(is_double ? proto.double_diff(i) : proto.diff(i), blob.cpu_diff()[i]) << i;
  }

  // The other precision's fields are left as they were (Caffe clears only its own).
  BlobProto mixed;
  if (is_double) {
    mixed.add_data(7.f);
  } else {
    mixed.add_double_data(7.0);
  }
  blob.ToProto(&mixed);
  EXPECT_EQ(is_double ? mixed.data_size() : mixed.double_data_size(), 1);
}

TYPED_TEST(PeerBlobTest, RoundTripThroughTheWireFormat) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob(vector<int>{3, 1, 5, 2, 2});
  this->fill(blob);
  caffe::caffe_rng_gaussian<Dtype>(blob.count(), Dtype(0), Dtype(1), blob.mutable_cpu_diff());
  this->move_head(blob, false);
  BlobProto proto;
  blob.ToProto(&proto, true);
  std::string bytes;
  ASSERT_TRUE(proto.SerializeToString(&bytes));

  BlobProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  Blob<Dtype> back;
  back.FromProto(parsed);
  EXPECT_EQ(back.shape(), blob.shape());
  this->move_head(back, false);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(back.cpu_data()[i], blob.cpu_data()[i]) << i;
    EXPECT_EQ(back.cpu_diff()[i], blob.cpu_diff()[i]) << i;
  }
  // FromProto without reshape into a blob of that shape; the same bytes come out again.
  Blob<Dtype> same_shape(vector<int>{3, 1, 5, 2, 2});
  this->move_head(same_shape, false);
  same_shape.FromProto(parsed, false);
  BlobProto again;
  same_shape.ToProto(&again, true);
  std::string bytes_again;
  again.SerializeToString(&bytes_again);
  EXPECT_EQ(bytes_again, bytes);
}

TYPED_TEST(PeerBlobTest, FromProtoReadsLegacyFourDFields) {
  using Dtype = typename TypeParam::Dtype;
  BlobProto legacy;  // as files from before `shape` were written
  legacy.set_num(2);
  legacy.set_channels(1);
  legacy.set_height(3);
  legacy.set_width(2);
  for (int i = 0; i < 12; ++i) legacy.add_data(0.5f * i - 2);
  Blob<Dtype> blob;
  blob.FromProto(legacy);
  EXPECT_EQ(blob.shape(), (vector<int>{2, 1, 3, 2}));
  EXPECT_TRUE(blob.ShapeEquals(legacy));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(blob.cpu_data()[i], Dtype(0.5f * i - 2)) << i;
  // No diff in the message: the blob's diff is left alone.
  EXPECT_EQ(blob.asum_diff(), 0);
  // Written back, it carries `shape` and the same values.
  BlobProto written;
  blob.ToProto(&written);
  EXPECT_EQ(written.shape().dim_size(), 4);
  EXPECT_EQ(written.shape().dim(0), 2);
}

TYPED_TEST(PeerBlobTest, FromProtoReadsTheOtherPrecision) {
  using Dtype = typename TypeParam::Dtype;
  // float fields into a double blob and double fields into a float blob, as Caffe's
  // FromProto falls back to whichever precision the message has.
  BlobProto floats, doubles;
  floats.mutable_shape()->add_dim(4);
  doubles.mutable_shape()->add_dim(4);
  for (int i = 0; i < 4; ++i) {
    floats.add_data(1.25f * i);
    floats.add_diff(-1.0f * i);
    doubles.add_double_data(0.75 * i);
    doubles.add_double_diff(2.0 * i);
  }
  Blob<Dtype> from_float, from_double;
  from_float.FromProto(floats);
  from_double.FromProto(doubles);
  this->move_head(from_float, false);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(from_float.cpu_data()[i], Dtype(1.25f * i));
    EXPECT_EQ(from_float.cpu_diff()[i], Dtype(-1.0f * i));
    EXPECT_EQ(from_double.cpu_data()[i], Dtype(0.75 * i));
    EXPECT_EQ(from_double.cpu_diff()[i], Dtype(2.0 * i));
  }
}

TYPED_TEST(PeerBlobTest, FromProtoRefusesWhatDoesNotFit) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob(vector<int>{2, 2});
  caffe::caffe_set(4, Dtype(9), blob.mutable_cpu_data());
  BlobProto short_data;  // four elements declared, three given
  short_data.mutable_shape()->add_dim(4);
  for (int i = 0; i < 3; ++i) short_data.add_data(1);
  EXPECT_THROW(blob.FromProto(short_data), blobrt::Error);
  BlobProto other_shape;  // right count, other shape, and no reshape allowed
  other_shape.mutable_shape()->add_dim(4);
  for (int i = 0; i < 4; ++i) other_shape.add_data(1);
  EXPECT_THROW(blob.FromProto(other_shape, false), blobrt::Error);
  // Caffe aborts here; blobrt throws and leaves the blob as it was.
  EXPECT_EQ(blob.shape(), (vector<int>{2, 2}));
  EXPECT_EQ(blob.asum_data(), 36);
}

}  // namespace
}  // namespace caffe_peer
