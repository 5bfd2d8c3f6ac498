// Caffe model files without Caffe (blobrt/model_file.hpp), and the BlobProto reader's refusal
// of a file that is not a BlobProto: layouts made here (current, V1, V0), and the LeNet
// .caffemodel BVLC Caffe wrote (shared/reference-data, BLOBRT_REFERENCE_DATA_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

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

}  // namespace
