// Caffe model files without Caffe (blobrt/model_file.hpp).
#include "blobrt/model_file.hpp"

#include <map>
#include <set>
#include <utility>

#include "blobrt.pb.h"
#include "blobrt/error.hpp"
#include "blobrt/io.hpp"
#include "model_file_check.hpp"

namespace blobrt {
namespace {

// Caffe's V1LayerParameter.LayerType values with the type names Caffe's upgrade_proto gives
// them (caffe.proto; UpgradeV1LayerType).
const std::map<int, std::string>& v1_types() {
  static const std::map<int, std::string> types = {
      {35, "AbsVal"}, {1, "Accuracy"}, {30, "ArgMax"}, {2, "BNLL"}, {3, "Concat"},
      {37, "ContrastiveLoss"}, {4, "Convolution"}, {39, "Deconvolution"}, {5, "Data"},
      {6, "Dropout"}, {32, "DummyData"}, {7, "EuclideanLoss"}, {25, "Eltwise"}, {38, "Exp"},
      {8, "Flatten"}, {9, "HDF5Data"}, {10, "HDF5Output"}, {28, "HingeLoss"}, {11, "Im2col"},
      {12, "ImageData"}, {13, "InfogainLoss"}, {14, "InnerProduct"}, {15, "LRN"},
      {29, "MemoryData"}, {16, "MultinomialLogisticLoss"}, {34, "MVN"}, {17, "Pooling"},
      {26, "Power"}, {18, "ReLU"}, {19, "Sigmoid"}, {27, "SigmoidCrossEntropyLoss"},
      {36, "Silence"}, {20, "Softmax"}, {21, "SoftmaxWithLoss"}, {22, "Split"}, {33, "Slice"},
      {23, "TanH"}, {24, "WindowData"}, {31, "Threshold"}};
  return types;
}

// V0's type strings and the V1 values Caffe's UpgradeV0LayerType maps them to.
const std::map<std::string, int>& v0_types() {
  static const std::map<std::string, int> types = {
      {"accuracy", 1}, {"bnll", 2}, {"concat", 3}, {"conv", 4}, {"data", 5}, {"dropout", 6},
      {"euclidean_loss", 7}, {"flatten", 8}, {"hdf5_data", 9}, {"hdf5_output", 10},
      {"im2col", 11}, {"images", 12}, {"infogain_loss", 13}, {"innerproduct", 14}, {"lrn", 15},
      {"multinomial_logistic_loss", 16}, {"pool", 17}, {"relu", 18}, {"sigmoid", 19},
      {"softmax", 20}, {"softmax_loss", 21}, {"split", 22}, {"tanh", 23}, {"window_data", 24}};
  return types;
}

std::string field_numbers(const google::protobuf::UnknownFieldSet& fields) {
  std::set<int> numbers;
  for (int i = 0; i < fields.field_count(); ++i) numbers.insert(fields.field(i).number());
  std::string out;
  for (int n : numbers) out += (out.empty() ? "" : ", ") + std::to_string(n);
  return out;
}

}  // namespace

std::string v1_layer_type_name(int type) {
  auto it = v1_types().find(type);
  return it == v1_types().end() ? std::string() : it->second;
}

std::string v0_layer_type_name(const std::string& type) {
  auto it = v0_types().find(type);
  return it == v0_types().end() ? type : v1_layer_type_name(it->second);
}

std::vector<ModelLayer> model_layers(NetParameter* net) {
  std::vector<ModelLayer> layers;
  for (LayerParameter& layer : *net->mutable_layer()) {
    layers.push_back({layer.name(), layer.type(), "layer", layer.mutable_blobs()});
  }
  for (V1LayerParameter& layer : *net->mutable_layers()) {
    if (layer.has_layer()) {  // V0: the layer's fields nested at field 1
      V0LayerParameter* v0 = layer.mutable_layer();
      layers.push_back({v0->name(), v0_layer_type_name(v0->type()), "layers.layer", v0->mutable_blobs()});
    } else {
      std::string type = v1_layer_type_name(layer.type());
      if (type.empty() && layer.type() != 0) type = "V1 type " + std::to_string(layer.type());
      layers.push_back({layer.name(), type, "layers", layer.mutable_blobs()});
    }
  }
  return layers;
}

bool ReadModelFile(const std::string& filename, NetParameter* net) {
  if (!net) throw Error("ReadModelFile: null NetParameter");
  if (!ReadProtoFromBinaryFile(filename, net)) return false;  // last_read_error() says why
  const auto& unknown = net->GetReflection()->GetUnknownFields(*net);
  std::string why;
  if (!unknown.empty()) {
    why = "it has fields a NetParameter does not (" + field_numbers(unknown) + ")";
  } else if (net->layer_size() == 0 && net->layers_size() == 0) {
    why = "it holds no layer";
  }
  if (why.empty()) return true;
  BlobProto as_blob;
  const std::string bytes = net->SerializeAsString();
  if (as_blob.ParseFromString(bytes) && model_check::looks_like_blob_proto(as_blob)) {
    why += "; it appears to be a BlobProto (blobrt.load, blobrt inspect read it)";
  }
  model_check::set_read_error(filename + ": not a Caffe model file (binary NetParameter): " + why);
  net->Clear();
  return false;
}

void ReadModelFileOrDie(const std::string& filename, NetParameter* net) {
  if (!ReadModelFile(filename, net)) throw Error(last_read_error());
}

}  // namespace blobrt

namespace blobrt::model_check {

bool looks_like_blob_proto(const BlobProto& proto) {
  const bool own = proto.has_shape() || proto.data_size() || proto.diff_size() || proto.double_data_size() ||
                   proto.double_diff_size() || proto.has_num() || proto.has_channels() || proto.has_height() ||
                   proto.has_width();
  return own && proto.GetReflection()->GetUnknownFields(proto).empty();
}

std::string not_a_blob_proto(const BlobProto& proto) {
  const auto& unknown = proto.GetReflection()->GetUnknownFields(proto);
  if (unknown.empty()) return {};
  // A NetParameter's layer lists (fields 100 and 2, messages) are never a BlobProto's: a file
  // with them is tried as a model file even where some of its fields land in BlobProto's own
  // (NetParameter's input_dim is field 4, BlobProto's width; input_shape 8, double_data).
  bool layer_lists = false;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    layer_lists |= (f.number() == 100 || f.number() == 2) &&
                   f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED;
  }
  BlobProto own_fields(proto);
  own_fields.GetReflection()->MutableUnknownFields(&own_fields)->Clear();
  if (!layer_lists && own_fields.ByteSizeLong() > 0) return {};  // its own fields beside undefined ones: kept
  NetParameter net;
  // The message's own bytes, its fields of both kinds (protobuf writes the ones it knows
  // first; field order does not change what a NetParameter parse reads).
  if (net.ParseFromString(proto.SerializeAsString()) && net.GetReflection()->GetUnknownFields(net).empty() &&
      (net.layer_size() > 0 || net.layers_size() > 0)) {
    return "not a BlobProto: it appears to be a Caffe model file (a binary NetParameter, .caffemodel) with " +
           std::to_string(net.layer_size() + net.layers_size()) +
           " layers; `blobrt inspect` lists them and blobrt.load_caffemodel reads their weights";
  }
  if (layer_lists) return {};  // not a NetParameter either: kept as read, as any other undefined field
  return "not a BlobProto: it has none of BlobProto's fields, only fields BlobProto does not define (" +
         field_numbers(unknown) + ")";
}

}  // namespace blobrt::model_check
