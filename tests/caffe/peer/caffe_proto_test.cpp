// The generated caffe.pb.h (include/caffe/proto/caffe.proto: Caffe's messages with Caffe's
// field numbers and types) and blobrt's compatibility header in one program: caffe::BlobProto
// is the generated message, and caffe::Blob reads, writes and compares it, with the files
// BVLC Caffe wrote (tests/data); a LayerParameter carries blobs and fillers as Caffe's do.
#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "caffe/proto/caffe.pb.h"  // first, as Caffe's layer code does
#include "blobrt/caffe_compat.hpp"
#include "test_paths.hpp"

namespace {

using caffe::Blob;

static_assert(std::is_base_of<google::protobuf::Message, caffe::BlobProto>::value, "caffe::BlobProto is the generated message");
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
  EXPECT_EQ(ours, theirs);
  std::ifstream file(data + "/ref_float_2x3x4x5_diff.binaryproto", std::ios::binary);
  const std::string file_bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(ours, file_bytes);  // byte-identical to the file BVLC Caffe wrote

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

TEST(CaffeProtoTest, DoubleBlobsGoThroughTheDoubleFieldsOfAFile) {
  Blob<double> blob(std::vector<int>{3, 2});
  for (int i = 0; i < 6; ++i) blob.mutable_cpu_data()[i] = 1.0 / (i + 3);  // not floats
  for (int i = 0; i < 6; ++i) blob.mutable_cpu_diff()[i] = -0.1 * i;
  caffe::BlobProto proto;
  blob.ToProto(&proto, true);
  EXPECT_EQ(proto.data_size(), 0);
  EXPECT_EQ(proto.double_data_size(), 6);
  const std::string path = ::testing::TempDir() + "/blobrt_double.binaryproto";
  caffe::WriteProtoToBinaryFile(proto, path);
  caffe::BlobProto read;
  ASSERT_TRUE(caffe::ReadProtoFromBinaryFile(path, &read));
  Blob<double> back;
  back.FromProto(read);
  EXPECT_EQ(back.shape_string(), "3 2 (6)");
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(back.cpu_data()[i], 1.0 / (i + 3));
    EXPECT_EQ(back.cpu_diff()[i], -0.1 * i);
  }
}

// The wire bytes of the fields blobs use, as Caffe's caffe.proto numbers and packs them:
// shape = 7 (dim = 1, packed int64), data = 5 (packed float), legacy num = 1 (int32).
TEST(CaffeProtoTest, FieldNumbersAndPackingAreCaffes) {
  caffe::BlobProto proto;
  proto.set_num(2);
  proto.mutable_shape()->add_dim(2);
  proto.add_data(1.0f);
  std::string bytes;
  ASSERT_TRUE(proto.SerializeToString(&bytes));
  const std::string expected("\x08\x02"                   // 1: varint 2
                             "\x2a\x04\x00\x00\x80\x3f"   // 5: packed, 4 bytes, 1.0f
                             "\x3a\x03\x0a\x01\x02",       // 7: { 1: packed, 1 byte, 2 }
                             13);
  EXPECT_EQ(bytes, expected);
  caffe::FillerParameter filler;
  filler.set_type("msra");
  filler.set_variance_norm(caffe::FillerParameter::AVERAGE);
  ASSERT_TRUE(filler.SerializeToString(&bytes));
  EXPECT_EQ(bytes, std::string("\x0a\x04msra\x40\x02", 8));  // 1: string, 8: enum
}

TEST(CaffeProtoTest, LayerParameterCarriesFillersAndBlobs) {
  // An InnerProduct layer as a Caffe prototxt writes it, with a field Caffe's
  // LayerParameter has and this caffe.proto does not declare (phase, field 10).
  caffe::LayerParameter layer;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'ip1' type: 'InnerProduct' bottom: 'data' top: 'ip1' "
      "inner_product_param { num_output: 4 weight_filler { type: 'xavier' } "
      "bias_filler { type: 'constant' value: 0.5 } }",
      &layer));
  const caffe::InnerProductParameter& ip = layer.inner_product_param();
  EXPECT_EQ(ip.num_output(), 4u);
  EXPECT_TRUE(ip.bias_term());
  EXPECT_EQ(ip.axis(), 1);
  EXPECT_EQ(ip.weight_filler().type(), "xavier");
  EXPECT_EQ(ip.bias_filler().value(), 0.5f);

  // The layer's blobs, filled as the fillers say, written into it and read back.
  Blob<float> weights(std::vector<int>{4, 6}), bias(std::vector<int>{4});
  const float scale = std::sqrt(3.0f / 6);  // xavier, fan_in 6
  caffe::caffe_rng_uniform<float>(weights.count(), -scale, scale, weights.mutable_cpu_data());
  caffe::caffe_set(bias.count(), ip.bias_filler().value(), bias.mutable_cpu_data());
  weights.ToProto(layer.add_blobs());
  bias.ToProto(layer.add_blobs());
  std::string bytes;
  ASSERT_TRUE(layer.SerializeToString(&bytes));
  bytes += std::string("\x50\x01", 2);  // phase: TEST, as Caffe would have written it

  caffe::LayerParameter parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  ASSERT_EQ(parsed.blobs_size(), 2);
  Blob<float> w2, b2;
  w2.FromProto(parsed.blobs(0));
  b2.FromProto(parsed.blobs(1));
  EXPECT_EQ(w2.shape_string(), "4 6 (24)");
  for (int i = 0; i < 24; ++i) EXPECT_EQ(w2.cpu_data()[i], weights.cpu_data()[i]);
  EXPECT_FLOAT_EQ(b2.asum_data(), 2.0f);
  std::string again;
  parsed.SerializeToString(&again);
  EXPECT_EQ(again, bytes);  // the unknown field is kept, byte for byte
}

}  // namespace
