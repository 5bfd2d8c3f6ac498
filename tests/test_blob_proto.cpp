// BlobProto compatibility with BVLC Caffe: the reference files it wrote load with exact
// values, and what blobrt writes for the same blob is byte-identical to Caffe's file.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "test_paths.hpp"

#ifndef BLOBRT_TEST_DATA_DIR
#error "BLOBRT_TEST_DATA_DIR must be defined by the build"
#endif

namespace blobrt {
namespace {

const std::string kData = BLOBRT_TEST_PATH(BLOBRT_TEST_DATA_DIR);
const std::string kBinary = kData + "/ref_float_2x3x4x5_diff.binaryproto";
const std::string kText = kData + "/ref_float_2x3x4x5_diff.prototxt";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void expect_reference_values(const Blob<float>& blob) {
  ASSERT_EQ(blob.shape(), (std::vector<int>{2, 3, 4, 5}));
  for (int i = 0; i < 120; ++i) {
    ASSERT_EQ(blob.cpu_data()[i], i * 0.5f - 7) << i;  // exact: written by Caffe
    ASSERT_EQ(blob.cpu_diff()[i], (120 - i) * 0.25f) << i;
  }
}

TEST(BlobProtoTest, LoadsCaffeBinaryProtoExactly) {
  BlobProto proto;
  ASSERT_TRUE(ReadProtoFromBinaryFile(kBinary, &proto));
  Blob<float> blob;
  blob.FromProto(proto);
  expect_reference_values(blob);
  // The figures BVLC Caffe computed on this blob.
  EXPECT_EQ(blob.asum_data(), 2835);
  EXPECT_EQ(blob.sumsq_data(), 98105);
  EXPECT_EQ(blob.asum_diff(), 1815);
  EXPECT_EQ(blob.sumsq_diff(), 36451.25);
  blob.Update();
  EXPECT_EQ(blob.asum_data(), 2777.5);
  EXPECT_EQ(blob.sumsq_data(), 87971.25);
}

TEST(BlobProtoTest, LoadsCaffeTextProtoExactly) {
  BlobProto proto;
  ASSERT_TRUE(ReadProtoFromTextFile(kText, &proto));
  Blob<float> blob;
  blob.FromProto(proto);
  expect_reference_values(blob);
}

TEST(BlobProtoTest, WritesTheSameBytesAsCaffe) {
  BlobProto proto;
  ASSERT_TRUE(ReadProtoFromBinaryFile(kBinary, &proto));
  Blob<float> blob;
  blob.FromProto(proto);
  BlobProto written;
  blob.ToProto(&written, true);
  std::string bytes;
  ASSERT_TRUE(written.SerializeToString(&bytes));
  std::string caffe = slurp(kBinary);
  ASSERT_EQ(caffe.size(), 974u);
  EXPECT_EQ(bytes, caffe);

  std::string path = ::testing::TempDir() + "/blobrt_written.binaryproto";
  WriteProtoToBinaryFile(written, path);
  EXPECT_EQ(slurp(path), caffe);
  std::string text_path = ::testing::TempDir() + "/blobrt_written.prototxt";
  WriteProtoToTextFile(written, text_path);
  EXPECT_EQ(slurp(text_path), slurp(kText));
}

TEST(BlobProtoTest, BuiltFromScratchMatchesCaffe) {
  // The blob the README of the reference data describes, built by hand.
  Blob<float> blob(2, 3, 4, 5);
  float* data = blob.mutable_cpu_data();
  float* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < 120; ++i) {
    data[i] = i * 0.5f - 7;
    diff[i] = (120 - i) * 0.25f;
  }
  BlobProto proto;
  blob.ToProto(&proto, true);
  std::string bytes;
  proto.SerializeToString(&bytes);
  EXPECT_EQ(bytes, slurp(kBinary));
}

TEST(BlobProtoTest, DoubleRoundTripUsesDoubleFields) {
  Blob<double> blob(std::vector<int>{3, 7});
  double* data = blob.mutable_cpu_data();
  double* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < 21; ++i) {
    data[i] = 1.0 / (i + 1);  // not representable in float
    diff[i] = -i * 1e-300;
  }
  BlobProto proto;
  blob.ToProto(&proto, true);
  EXPECT_EQ(proto.double_data_size(), 21);
  EXPECT_EQ(proto.double_diff_size(), 21);
  EXPECT_EQ(proto.data_size(), 0);
  Blob<double> back;
  back.FromProto(proto);
  for (int i = 0; i < 21; ++i) {
    EXPECT_EQ(back.cpu_data()[i], data[i]);
    EXPECT_EQ(back.cpu_diff()[i], diff[i]);
  }
  // A float blob reads double values (and the reverse), as Caffe does.
  Blob<float> as_float;
  as_float.FromProto(proto);
  EXPECT_EQ(as_float.cpu_data()[2], static_cast<float>(1.0 / 3));
  BlobProto float_proto;
  as_float.ToProto(&float_proto);
  Blob<double> widened;
  widened.FromProto(float_proto);
  EXPECT_EQ(widened.cpu_data()[2], static_cast<double>(static_cast<float>(1.0 / 3)));
  EXPECT_EQ(widened.asum_diff(), 0);  // no diff written
}

TEST(BlobProtoTest, ToProtoWithoutDiffClearsOldDiff) {
  Blob<float> blob(std::vector<int>{4});
  blob.mutable_cpu_data()[0] = 1;
  BlobProto proto;
  proto.add_diff(9);
  proto.add_diff(9);
  blob.ToProto(&proto, false);
  EXPECT_EQ(proto.diff_size(), 0);
  EXPECT_EQ(proto.data_size(), 4);
}

TEST(BlobProtoTest, LegacyFourDimensionalProto) {
  BlobProto proto;
  proto.set_num(2);
  proto.set_channels(1);
  proto.set_height(1);
  proto.set_width(3);
  for (int i = 0; i < 6; ++i) proto.add_data(static_cast<float>(i));
  Blob<float> blob;
  blob.FromProto(proto);
  EXPECT_EQ(blob.shape(), (std::vector<int>{2, 1, 1, 3}));
  EXPECT_EQ(blob.data_at(1, 0, 0, 2), 5);
  // Without reshape, the shape must match (legacy rules)...
  Blob<float> same(2, 1, 1, 3);
  EXPECT_NO_THROW(same.FromProto(proto, false));
  Blob<float> other(std::vector<int>{6});
  EXPECT_THROW(other.FromProto(proto, false), Error);
}

TEST(BlobProtoTest, CountMismatchIsAnErrorNamingBoth) {
  BlobProto proto;
  proto.mutable_shape()->add_dim(2);
  proto.mutable_shape()->add_dim(3);
  for (int i = 0; i < 5; ++i) proto.add_data(1);
  Blob<float> blob;
  try {
    blob.FromProto(proto);
    ADD_FAILURE() << "5 values for 6 elements accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data has 5 values"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 3 (6)"), std::string::npos) << e.what();
  }
  proto.add_data(1);
  proto.add_diff(1);
  EXPECT_THROW(blob.FromProto(proto), Error);  // diff count wrong
  proto.mutable_shape()->set_dim(0, -2);
  EXPECT_THROW(blob.FromProto(proto), Error);
}

TEST(BlobProtoTest, TooLargeForOneMessageIsAClearError) {
  // 2^29 floats of data + diff = 4 GiB > 2 GiB; the error comes before any allocation.
  Blob<float> huge(std::vector<int>{1 << 29});
  BlobProto proto;
  try {
    huge.ToProto(&proto, true);
    ADD_FAILURE() << "a 4 GiB BlobProto was attempted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 GiB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blobrt
