// Caffe's generated caffe.pb.h and blobrt's compatibility header in one program:
// caffe::BlobProto is Caffe's own message, and caffe::Blob reads, writes and compares it,
// with the files BVLC Caffe wrote (tests/data).
#include <gtest/gtest.h>

#include <string>

#include "caffe/proto/caffe.pb.h"  // first, as Caffe's layer code does
#include "blobrt/caffe_compat.hpp"
#include "test_paths.hpp"

namespace {

using caffe::Blob;

static_assert(std::is_same<caffe::BlobProto, ::caffe::BlobProto>::value, "caffe::BlobProto is Caffe's");
static_assert(!std::is_same<caffe::BlobProto, blobrt::BlobProto>::value, "and not blobrt's");

TEST(CaffeProtoTest, CaffesOwnBlobProtoRoundTrips) {
  const std::string data = BLOBRT_TEST_PATH(BLOBRT_TEST_DATA_DIR);
  caffe::BlobProto written_by_caffe;
  ASSERT_TRUE(caffe::ReadProtoFromBinaryFile(data + "/ref_float_2x3x4x5_diff.binaryproto", &written_by_caffe));
  Blob<float> blob;
  blob.FromProto(written_by_caffe);
  EXPECT_EQ(blob.shape_string(), "2 3 4 5 (120)");
  EXPECT_FLOAT_EQ(blob.asum_data(), 2835);  // Caffe's figures (tests/data/README.md)
  EXPECT_TRUE(blob.ShapeEquals(written_by_caffe));

  caffe::BlobProto back;
  blob.ToProto(&back, true);
  std::string ours, theirs;
  back.SerializeToString(&ours);
  written_by_caffe.SerializeToString(&theirs);
  EXPECT_EQ(ours, theirs);  // byte-identical to what Caffe wrote

  caffe::BlobShape shape;
  shape.add_dim(7);
  blob.Reshape(shape);
  EXPECT_EQ(blob.count(), 7);
  caffe::BlobProto wrong;
  wrong.mutable_shape()->add_dim(3);
  wrong.add_data(1);
  EXPECT_THROW(blob.FromProto(wrong), blobrt::Error);
  EXPECT_EQ(blob.count(), 7);
}

TEST(CaffeProtoTest, OtherCaffeMessagesGoThroughTheSameFileHelpers) {
  caffe::FillerParameter filler;
  filler.set_type("gaussian");
  filler.set_std(0.5f);
  std::string path = ::testing::TempDir() + "/blobrt_filler.prototxt";
  caffe::WriteProtoToTextFile(filler, path);
  caffe::FillerParameter back;
  ASSERT_TRUE(caffe::ReadProtoFromTextFile(path, &back));
  EXPECT_EQ(back.type(), "gaussian");
  EXPECT_FLOAT_EQ(back.std(), 0.5f);
}

}  // namespace
