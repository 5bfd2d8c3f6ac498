// Caffe model files without Caffe (blobrt/model_file.hpp), and the BlobProto reader's refusal
// of a file that is not a BlobProto: layouts made here (current, V1, V0), and the LeNet
// .caffemodel BVLC Caffe wrote (shared/reference-data, BLOBRT_REFERENCE_DATA_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <google/protobuf/unknown_field_set.h>

#include "blobrt.pb.h"
#include "blobrt/error.hpp"
#include "blobrt/io.hpp"
#include "blobrt/model_file.hpp"

namespace {

using blobrt::BlobProto;
using blobrt::NetParameter;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "blobrt_model_" + std::to_string(::getpid()) + "_" + name;
}

// Reads `path` as a BlobProto, which must be refused; returns the reason given.
std::string refused_as_blob_proto(const std::string& path) {
  BlobProto read;
  EXPECT_FALSE(blobrt::ReadBlobProtoFromFile(path, &read)) << path;
  return blobrt::last_read_error();
}

void add_blob(google::protobuf::RepeatedPtrField<BlobProto>* blobs, std::initializer_list<std::int64_t> shape);

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Protobuf's wire format by hand, for files of messages blobrt does not declare.
std::string varint(std::uint64_t n) {
  std::string out;
  do {
    out += static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n);
  return out;
}
std::string field_varint(int number, std::uint64_t value) { return varint(number << 3) + varint(value); }
std::string field_bytes(int number, const std::string& bytes) {
  return varint(number << 3 | 2) + varint(bytes.size()) + bytes;
}

// Both BlobProto readers (the format-deciding one and the binary one) refuse `path`; the
// reason, which must name the file, is returned.
std::string refused_by_both_readers(const std::string& path) {
  BlobProto read;
  EXPECT_FALSE(blobrt::ReadProtoFromBinaryFile(path, &read)) << path;
  EXPECT_EQ(read.ByteSizeLong(), 0u);
  const std::string why = refused_as_blob_proto(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  return why;
}

// A small model in the current layout: conv (2, 1, 3, 3) + (2,), relu, ip (4, 8) + (4,).
NetParameter small_model() {
  NetParameter net;
  net.set_name("small");
  auto* conv = net.add_layer();
  conv->set_name("conv");
  conv->set_type("Convolution");
  add_blob(conv->mutable_blobs(), {2, 1, 3, 3});
  add_blob(conv->mutable_blobs(), {2});
  auto* relu = net.add_layer();
  relu->set_name("relu");
  relu->set_type("ReLU");
  auto* ip = net.add_layer();
  ip->set_name("ip");
  ip->set_type("InnerProduct");
  add_blob(ip->mutable_blobs(), {4, 8});
  add_blob(ip->mutable_blobs(), {4});
  return net;
}

void add_blob(google::protobuf::RepeatedPtrField<BlobProto>* blobs, std::initializer_list<std::int64_t> shape) {
  BlobProto* b = blobs->Add();
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    b->mutable_shape()->add_dim(d);
    n *= d;
  }
  for (std::int64_t i = 0; i < n; ++i) b->add_data(static_cast<float>(i) * 0.5f);
}

TEST(ModelFile, CurrentV1AndV0LayoutsListTheirLayersWithCaffesTypeNames) {
  NetParameter net;
  net.set_name("mixed");
  auto* conv = net.add_layer();
  conv->set_name("conv1");
  conv->set_type("Convolution");
  add_blob(conv->mutable_blobs(), {4, 1, 3, 3});
  auto* v1 = net.add_layers();
  v1->set_name("ip_v1");
  v1->set_type(14);  // INNER_PRODUCT
  add_blob(v1->mutable_blobs(), {10, 36});
  auto* v0 = net.add_layers()->mutable_layer();
  v0->set_name("pool_v0");
  v0->set_type("pool");
  const std::string path = temp_path("layouts.caffemodel");
  blobrt::WriteProtoToBinaryFile(net, path);

  NetParameter back;
  ASSERT_TRUE(blobrt::ReadModelFile(path, &back)) << blobrt::last_read_error();
  const auto layers = blobrt::model_layers(&back);
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].name, "conv1");
  EXPECT_EQ(layers[0].type, "Convolution");
  EXPECT_EQ(layers[0].layout, "layer");
  EXPECT_EQ(layers[0].blobs->size(), 1);
  EXPECT_EQ(layers[1].type, "InnerProduct");
  EXPECT_EQ(layers[1].layout, "layers");
  EXPECT_EQ((*layers[1].blobs)[0].data_size(), 360);
  EXPECT_EQ(layers[2].name, "pool_v0");
  EXPECT_EQ(layers[2].type, "Pooling");
  EXPECT_EQ(layers[2].layout, "layers.layer");
  EXPECT_EQ(blobrt::v1_layer_type_name(21), "SoftmaxWithLoss");
  EXPECT_EQ(blobrt::v1_layer_type_name(0), "");
  EXPECT_EQ(blobrt::v0_layer_type_name("innerproduct"), "InnerProduct");
  EXPECT_EQ(blobrt::v0_layer_type_name("mystery"), "mystery");
}

TEST(ModelFile, FieldsBlobrtDoesNotDeclareAreWrittenBackUnchanged) {
  // A layer parameter blobrt does not know (Caffe's convolution_param, field 106) survives.
  NetParameter net;
  auto* layer = net.add_layer();
  layer->set_name("conv1");
  layer->set_type("Convolution");
  layer->GetReflection()->MutableUnknownFields(layer)->AddLengthDelimited(106, std::string("\x08\x14", 2));
  add_blob(layer->mutable_blobs(), {2, 2});
  const std::string path = temp_path("unknown.caffemodel");
  blobrt::WriteProtoToBinaryFile(net, path);
  NetParameter back;
  ASSERT_TRUE(blobrt::ReadModelFile(path, &back));
  blobrt::model_layers(&back)[0].blobs->Mutable(0)->set_data(0, 9.f);
  blobrt::WriteProtoToBinaryFile(back, path);
  NetParameter again;
  ASSERT_TRUE(blobrt::ReadModelFile(path, &again));
  const auto& unknown = again.layer(0).GetReflection()->GetUnknownFields(again.layer(0));
  ASSERT_EQ(unknown.field_count(), 1);
  EXPECT_EQ(unknown.field(0).number(), 106);
  EXPECT_EQ(again.layer(0).blobs(0).data(0), 9.f);
}

TEST(ModelFile, ABlobProtoIsNotAModelFileAndTheReverse) {
  BlobProto blob;
  blob.mutable_shape()->add_dim(3);
  blob.add_data(1);
  blob.add_data(2);
  blob.add_data(3);
  const std::string blob_path = temp_path("blob.binaryproto");
  blobrt::WriteProtoToBinaryFile(blob, blob_path);
  NetParameter net;
  EXPECT_FALSE(blobrt::ReadModelFile(blob_path, &net));
  EXPECT_NE(blobrt::last_read_error().find("appears to be a BlobProto"), std::string::npos)
      << blobrt::last_read_error();
  EXPECT_THROW(blobrt::ReadModelFileOrDie(blob_path, &net), blobrt::Error);

  NetParameter model;
  model.add_layer()->set_name("only");
  const std::string model_path = temp_path("net.caffemodel");
  blobrt::WriteProtoToBinaryFile(model, model_path);
  const std::string why = refused_as_blob_proto(model_path);
  EXPECT_NE(why.find("appears to be a Caffe model file"), std::string::npos) << why;
  EXPECT_NE(why.find(model_path), std::string::npos);
}

TEST(ModelFile, AModelWithFieldsThatLandInBlobProtosIsStillRefused) {
  // NetParameter's input_dim (field 4) is BlobProto's width: a deploy-style file sets it.
  NetParameter model;
  model.add_input("data");
  for (int d : {1, 1, 28, 28}) model.add_input_dim(d);
  model.add_layer()->set_name("conv1");
  const std::string path = temp_path("deploy_style.caffemodel");
  blobrt::WriteProtoToBinaryFile(model, path);
  const std::string why = refused_as_blob_proto(path);
  EXPECT_NE(why.find("appears to be a Caffe model file"), std::string::npos) << why;
}

TEST(ModelFile, UndefinedFieldsOnlyAreRefusedNotReadAsAnEmptyBlob) {
  BlobProto odd;
  odd.GetReflection()->MutableUnknownFields(&odd)->AddVarint(200, 5);
  const std::string path = temp_path("odd.bin");
  {
    std::ofstream out(path, std::ios::binary);
    out << odd.SerializeAsString();
  }
  const std::string why = refused_as_blob_proto(path);
  EXPECT_NE(why.find("(200)"), std::string::npos) << why;
}

TEST(ModelFile, LeNetWrittenByBvlcCaffe) {
  const char* dir = std::getenv("BLOBRT_REFERENCE_DATA_DIR");
  const std::string path = std::string(dir ? dir : "") + "/lenet_iter_200.caffemodel";
  if (!dir || !std::ifstream(path)) GTEST_SKIP() << "no " << path << " (BLOBRT_REFERENCE_DATA_DIR)";
  NetParameter net;
  ASSERT_TRUE(blobrt::ReadModelFile(path, &net)) << blobrt::last_read_error();
  EXPECT_EQ(net.name(), "LeNet");
  const auto layers = blobrt::model_layers(&net);
  ASSERT_EQ(layers.size(), 9u);
  const char* names[] = {"mnist", "conv1", "pool1", "conv2", "pool2", "ip1", "relu1", "ip2", "loss"};
  const char* types[] = {"Data", "Convolution", "Pooling", "Convolution", "Pooling", "InnerProduct", "ReLU",
                         "InnerProduct", "SoftmaxWithLoss"};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(layers[i].name, names[i]);
    EXPECT_EQ(layers[i].type, types[i]);
  }
  ASSERT_EQ(layers[5].blobs->size(), 2);
  const BlobProto& ip1 = (*layers[5].blobs)[0];
  ASSERT_EQ(ip1.shape().dim_size(), 2);
  EXPECT_EQ(ip1.shape().dim(0), 500);
  EXPECT_EQ(ip1.shape().dim(1), 800);
  EXPECT_EQ(ip1.data_size(), 400000);
  // Written back: as many bytes (the fields blobrt does not declare come after the ones it
  // does, which protobuf readers, Caffe's included, accept in any order), and read again the
  // same message. That Caffe loads such a file was checked with pycaffe (docs/caffe-on-blobrt.md).
  const std::string copy = temp_path("lenet_copy.caffemodel");
  blobrt::WriteProtoToBinaryFile(net, copy);
  std::ifstream a(path, std::ios::binary), b(copy, std::ios::binary);
  const std::string bytes_a((std::istreambuf_iterator<char>(a)), {}), bytes_b((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(bytes_a.size(), 1725006u);
  EXPECT_EQ(bytes_b.size(), bytes_a.size());
  NetParameter again;
  ASSERT_TRUE(blobrt::ReadModelFile(copy, &again));
  EXPECT_TRUE(again.SerializeAsString() == net.SerializeAsString());
}

// Issue 48: a Caffe Datum (channels 1, height 28, width 28, data bytes, label) was read as the
// made-up Blob (1, 28, 28, 0): its data is length-delimited where BlobProto's width is a varint.
TEST(ModelFile, ADatumIsNotReadAsABlob) {
  const std::string path = temp_path("image.datum");
  write_bytes(path, field_varint(1, 1) + field_varint(2, 28) + field_varint(3, 28) +
                        field_bytes(4, std::string(784, '\x07')) + field_varint(5, 3));
  const std::string why = refused_by_both_readers(path);
  EXPECT_NE(why.find("not a BlobProto"), std::string::npos) << why;
  EXPECT_NE(why.find("field 4 is length-delimited"), std::string::npos) << why;
}

// Issue 48: a .solverstate (iter 200, learned_net, history blobs) was read as (200, 0, 0, 0).
TEST(ModelFile, ASolverStateIsNotReadAsABlob) {
  BlobProto history;
  history.mutable_shape()->add_dim(2);
  history.add_data(1);
  history.add_data(2);
  const std::string path = temp_path("lenet_iter_200.solverstate");
  write_bytes(path, field_varint(1, 200) + field_bytes(2, "lenet_iter_200.caffemodel") +
                        field_bytes(3, history.SerializeAsString()) + field_varint(4, 0));
  const std::string why = refused_by_both_readers(path);
  EXPECT_NE(why.find("field 2 is length-delimited"), std::string::npos) << why;
}

// Protobuf's lenient parse keeps unknown fields beside a BlobProto's own: such a file was
// read as the blob of its own fields, the rest silently dropped; now it is refused.
TEST(ModelFile, ABlobProtoWithFieldsItDoesNotDefineIsRefused) {
  BlobProto blob;
  blob.mutable_shape()->add_dim(2);
  blob.add_data(1);
  blob.add_data(2);
  const std::string path = temp_path("extra.binaryproto");
  write_bytes(path, blob.SerializeAsString() + field_varint(20, 1));
  EXPECT_NE(refused_by_both_readers(path).find("(20)"), std::string::npos);
  // The same inside its shape.
  const float values[2] = {1, 2};
  write_bytes(path, field_bytes(7, field_bytes(1, varint(2)) + field_varint(3, 9)) +
                        field_bytes(5, std::string(reinterpret_cast<const char*>(values), sizeof values)));
  EXPECT_NE(refused_by_both_readers(path).find("in its shape: 3"), std::string::npos);
}

// Bytes that parse (an empty packed data list) but set none of BlobProto's fields are no blob.
TEST(ModelFile, NonEmptyBytesWithNothingOfABlobAreRefused) {
  const std::string path = temp_path("nothing.bin");
  write_bytes(path, std::string("\x2a\x00", 2));
  EXPECT_NE(refused_by_both_readers(path).find("none of BlobProto's fields"), std::string::npos);
  // An empty file is still the empty blob, as before.
  write_bytes(path, "");
  BlobProto read;
  EXPECT_TRUE(blobrt::ReadProtoFromBinaryFile(path, &read)) << blobrt::last_read_error();
}

// Issue 48: forks add fields to NetParameter; such a model was refused ("it has fields a
// NetParameter does not"). They are kept: read, written back, their bytes still there.
TEST(ModelFile, AForksExtraNetParameterFieldsAreKept) {
  const std::string extra = field_varint(999, 7) + field_bytes(1000, "a fork's own field");
  const std::string path = temp_path("fork.caffemodel");
  write_bytes(path, small_model().SerializeAsString() + extra);
  NetParameter net;
  ASSERT_TRUE(blobrt::ReadModelFile(path, &net)) << blobrt::last_read_error();
  EXPECT_EQ(blobrt::model_layers(&net).size(), 3u);
  const std::string copy = temp_path("fork_copy.caffemodel");
  blobrt::WriteProtoToBinaryFile(net, copy);
  const std::string written = read_bytes(copy);
  EXPECT_NE(written.find(extra), std::string::npos);
  EXPECT_EQ(written.size(), read_bytes(path).size());
  // Read as a BlobProto it is still a model file, not an empty blob.
  EXPECT_NE(refused_by_both_readers(path).find("appears to be a Caffe model file"), std::string::npos);
}

// A field at a number BVLC's NetParameter uses, but of another wire type, is corruption, not
// a fork's field: refused, naming the field.
TEST(ModelFile, AFieldOfTheWrongWireTypeIsRefused) {
  const std::string path = temp_path("mistyped.caffemodel");
  write_bytes(path, small_model().SerializeAsString() + field_varint(3, 7));  // input is a string
  NetParameter net;
  EXPECT_FALSE(blobrt::ReadModelFile(path, &net));
  EXPECT_NE(blobrt::last_read_error().find("corrupt Caffe model file"), std::string::npos) << blobrt::last_read_error();
  EXPECT_NE(blobrt::last_read_error().find("field 3 is a varint"), std::string::npos) << blobrt::last_read_error();
  EXPECT_THROW(blobrt::ReadModelFileOrDie(path, &net), blobrt::Error);
  refused_by_both_readers(path);
}

// Issue 48: one corrupt byte inside a layer made `blobrt inspect` and blobrt.load read an
// empty Blob. Each kind of corruption is now an error naming the file and what is wrong.
TEST(ModelFile, ACorruptLayerIsAnErrorNeverAnEmptyBlob) {
  const std::string good = small_model().SerializeAsString();
  const std::string path = temp_path("corrupt.caffemodel");
  NetParameter net;
  // The first blob's dimension 2 -> 3: its 18 values no longer fit its shape.
  std::string bad_shape = good;
  const std::string dims = std::string("\x0a\x04\x02\x01\x03\x03", 6);
  ASSERT_NE(bad_shape.find(dims), std::string::npos);
  bad_shape[bad_shape.find(dims) + 2] = 3;
  write_bytes(path, bad_shape);
  EXPECT_FALSE(blobrt::ReadModelFile(path, &net));
  EXPECT_NE(blobrt::last_read_error().find("layer 'conv' blob 0"), std::string::npos) << blobrt::last_read_error();
  EXPECT_NE(refused_by_both_readers(path).find("corrupt"), std::string::npos);
  // A length inside a layer made longer: nothing parses, and the BlobProto reader says so.
  std::string bad_length = good;
  const std::size_t conv = bad_length.find(std::string("\x0a\x04" "conv", 6));
  ASSERT_NE(conv, std::string::npos);
  bad_length[conv + 1] = 0x30;
  write_bytes(path, bad_length);
  EXPECT_FALSE(blobrt::ReadModelFile(path, &net));
  EXPECT_NE(blobrt::last_read_error().find(path), std::string::npos);
  EXPECT_NE(refused_by_both_readers(path).find("nor a valid Caffe model file"), std::string::npos);
  // A layer's tag (field 100) turned into another number: the layer would silently go.
  std::string bad_tag = good;
  const std::size_t relu = bad_tag.find(std::string("\x0a\x04" "relu", 6));
  ASSERT_NE(relu, std::string::npos);
  ASSERT_EQ(bad_tag.substr(relu - 3, 2), std::string("\xa2\x06", 2));
  bad_tag[relu - 3] = static_cast<char>(0xaa);  // field 101
  write_bytes(path, bad_tag);
  EXPECT_FALSE(blobrt::ReadModelFile(path, &net));
  EXPECT_NE(blobrt::last_read_error().find("holds a whole ReLU layer ('relu')"), std::string::npos)
      << blobrt::last_read_error();
  // A layer's tag turned into input_dim's (field 4, a packed list): 4 per input are required.
  bad_tag[relu - 3] = 0x22;
  bad_tag.erase(relu - 2, 1);
  write_bytes(path, bad_tag);
  EXPECT_FALSE(blobrt::ReadModelFile(path, &net));
  EXPECT_NE(blobrt::last_read_error().find("input_dim"), std::string::npos) << blobrt::last_read_error();
}

}  // namespace

