// BlobProto compatibility with BVLC Caffe: the reference files it wrote load with exact
// values, and what blobrt writes for the same blob is byte-identical to Caffe's file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
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

// A default-constructed Blob (no axes, count 0) saved with ToProto reads back as the same;
// Caffe reads the same proto as a scalar needing one value and fails. A scalar (no axes,
// one value) stays a scalar.
TEST(BlobProtoTest, DefaultConstructedBlobRoundTrips) {
  Blob<float> empty;
  BlobProto proto;
  empty.ToProto(&proto, true);
  Blob<float> back(std::vector<int>{4, 2});
  back.FromProto(proto);
  EXPECT_EQ(back.num_axes(), 0);
  EXPECT_EQ(back.count(), 0);
  Blob<float> fresh;
  EXPECT_NO_THROW(fresh.FromProto(proto, false));  // same shape: nothing to read
  EXPECT_EQ(fresh.count(), 0);
  Blob<float> scalar(std::vector<int>{});
  EXPECT_EQ(scalar.count(), 1);
  EXPECT_THROW(scalar.FromProto(proto, false), Error);  // an empty Blob is not a scalar
  scalar.mutable_cpu_data()[0] = 7;
  scalar.ToProto(&proto);
  back.FromProto(proto);
  EXPECT_EQ(back.count(), 1);
  EXPECT_EQ(back.cpu_data()[0], 7);
  // No shape at all and no values (an empty file) is the empty Blob too.
  back.FromProto(BlobProto());
  EXPECT_EQ(back.count(), 0);
  EXPECT_EQ(back.num_axes(), 0);
}

// Every writer with every reader of its files, for every kind of Blob: what is written
// reads back as the same Blob (shape, count, every value bit for bit, NaN as NaN).
template <typename T>
void fill_values(Blob<T>& blob) {
  const T specials[] = {T(0), T(-0.0), T(1) / T(3), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max(), T(-2.5)};
  for (std::int64_t i = 0; i < blob.count(); ++i) {
    blob.mutable_cpu_data()[i] = specials[i % 9];
    blob.mutable_cpu_diff()[i] = specials[(i + 4) % 9];
  }
}

template <typename T>
void expect_same_values(const T* a, const T* b, std::int64_t n, const std::string& what) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isnan(a[i])) {
      ASSERT_TRUE(std::isnan(b[i])) << what << " value " << i;
    } else {
      ASSERT_EQ(std::memcmp(&a[i], &b[i], sizeof(T)), 0) << what << " value " << i << ": " << a[i] << " vs " << b[i];
    }
  }
}

template <typename T>
void check_every_writer_and_reader(const std::string& label, const std::vector<int>* shape, bool diff) {
  Blob<T> blob;
  if (shape) blob.Reshape(*shape);
  fill_values(blob);
  BlobProto proto;
  blob.ToProto(&proto, diff);
  const std::string path = ::testing::TempDir() + "/blobrt_pairs_" + label;
  for (bool text : {false, true}) {
    text ? WriteProtoToTextFile(proto, path) : WriteProtoToBinaryFile(proto, path);
    for (bool automatic : {false, true}) {
      const std::string what = label + (text ? " text" : " binary") + (automatic ? " read by ReadBlobProtoFromFile" : "");
      BlobProto read;
      bool ok = automatic ? ReadBlobProtoFromFile(path, &read)
                          : (text ? ReadProtoFromTextFile(path, &read) : ReadProtoFromBinaryFile(path, &read));
      ASSERT_TRUE(ok) << what << ": " << last_read_error();
      Blob<T> back(std::vector<int>{5});
      ASSERT_NO_THROW(back.FromProto(read)) << what;
      ASSERT_EQ(back.shape(), blob.shape()) << what;
      ASSERT_EQ(back.count(), blob.count()) << what;
      if (blob.count() == 0) continue;
      expect_same_values(blob.cpu_data(), back.cpu_data(), blob.count(), what + " data");
      if (diff) expect_same_values(blob.cpu_diff(), back.cpu_diff(), blob.count(), what + " diff");
    }
  }
}

TEST(BlobProtoTest, EveryWriterReadsBackWithEveryReader) {
  const std::vector<int> scalar{}, zero{0}, zero_inside{2, 0, 3}, plain{2, 3}, four{1, 2, 3, 4};
  for (bool diff : {false, true}) {
    const std::string d = diff ? "_diff" : "";
    check_every_writer_and_reader<float>("default_f" + d, nullptr, diff);
    check_every_writer_and_reader<double>("default_d" + d, nullptr, diff);
    check_every_writer_and_reader<float>("scalar_f" + d, &scalar, diff);
    check_every_writer_and_reader<double>("scalar_d" + d, &scalar, diff);
    check_every_writer_and_reader<float>("zero_f" + d, &zero, diff);
    check_every_writer_and_reader<double>("zero_inside_d" + d, &zero_inside, diff);
    check_every_writer_and_reader<float>("plain_f" + d, &plain, diff);
    check_every_writer_and_reader<double>("plain_d" + d, &plain, diff);
    check_every_writer_and_reader<float>("four_f" + d, &four, diff);
  }
}

// Legacy 4-D files (num, channels, height, width; Caffe's old writer): both formats, both
// readers, float and double values.
TEST(BlobProtoTest, LegacyFourDimensionalFilesReadBackEverywhere) {
  for (bool with_double : {false, true}) {
    BlobProto proto;
    proto.set_num(2);
    proto.set_channels(1);
    proto.set_height(1);
    proto.set_width(3);
    for (int i = 0; i < 6; ++i) with_double ? proto.add_double_data(i * 0.1) : proto.add_data(i * 0.5f);
    const std::string path = ::testing::TempDir() + "/blobrt_legacy";
    for (bool text : {false, true}) {
      text ? WriteProtoToTextFile(proto, path) : WriteProtoToBinaryFile(proto, path);
      BlobProto read;
      ProtoFormat format{};
      ASSERT_TRUE(ReadBlobProtoFromFile(path, &read, &format)) << last_read_error();
      EXPECT_EQ(format, text ? ProtoFormat::kText : ProtoFormat::kBinary);
      Blob<double> blob;
      blob.FromProto(read);
      EXPECT_EQ(blob.shape(), (std::vector<int>{2, 1, 1, 3}));
      EXPECT_EQ(blob.cpu_data()[5], with_double ? 5 * 0.1 : 2.5);
    }
  }
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
