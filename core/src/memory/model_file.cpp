// Caffe model files without Caffe (blobrt/model_file.hpp).
#include "blobrt/model_file.hpp"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "blobrt.pb.h"
#include "blobrt/blob.hpp"
#include "blobrt/error.hpp"
#include "blobrt/io.hpp"
#include "blobrt/escaped_text.hpp"
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

// A layer name for a message: valid UTF-8 as it is, any other byte, control characters and
// backslashes as \xNN (escaped_text.hpp), so that a corrupt name neither garbles a terminal
// nor fails Python's decoding.
std::string shown(const std::string& name) { return detail::escaped_text(name, /*keep_utf8=*/true); }

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
  if (!ReadProtoFromBinaryFile(filename, net)) {  // last_read_error() says why
    if (last_read_error().rfind(filename + ": not a valid binary", 0) == 0) {
      model_check::set_read_error(filename + ": not a Caffe model file (binary NetParameter): its bytes do not parse "
                                  "as one (truncated, corrupt, or another kind of file)");
    }
    return false;
  }
  const std::string why = model_check::model_problem(*net);
  if (why.empty()) return true;
  std::string message;
  if (net->layer_size() > 0 || net->layers_size() > 0) {
    message = filename + ": corrupt Caffe model file (binary NetParameter): " + why;
  } else {
    message = filename + ": not a Caffe model file (binary NetParameter): " + why;
    BlobProto as_blob;
    const std::string bytes = net->SerializeAsString();
    if (as_blob.ParseFromString(bytes) && model_check::not_a_blob_proto(as_blob, 1).empty()) {
      message += "; it appears to be a BlobProto (blobrt.load, blobrt inspect read it)";
    }
  }
  model_check::set_read_error(message);
  net->Clear();
  return false;
}

void ReadModelFileOrDie(const std::string& filename, NetParameter* net) {
  if (!ReadModelFile(filename, net)) throw Error(last_read_error());
}

}  // namespace blobrt

namespace blobrt::model_check {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::UnknownField;

const char* wire_name(UnknownField::Type type) {
  switch (type) {
    case UnknownField::TYPE_VARINT: return "a varint";
    case UnknownField::TYPE_FIXED32: return "fixed 32-bit";
    case UnknownField::TYPE_FIXED64: return "fixed 64-bit";
    case UnknownField::TYPE_LENGTH_DELIMITED: return "length-delimited";
    case UnknownField::TYPE_GROUP: return "a group";
  }
  return "unknown";
}

// The wire type a field is declared with (and the packed form a repeated number accepts).
std::string declared_wire(const FieldDescriptor* field) {
  std::string wire;
  switch (field->type()) {
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32: wire = "fixed 32-bit"; break;
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64: wire = "fixed 64-bit"; break;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE: return "length-delimited";
    case FieldDescriptor::TYPE_GROUP: return "a group";
    default: wire = "a varint"; break;
  }
  return field->is_repeated() ? wire + " or packed (length-delimited)" : wire;
}

// A repeated message's element named for the reader: its index and, when it has one, its name.
std::string element_name(const Message& element, const FieldDescriptor* field, int index) {
  std::string where = std::string(field->name()) + " " + std::to_string(index);
  const FieldDescriptor* name = element.GetDescriptor()->FindFieldByName("name");
  if (name && name->type() == FieldDescriptor::TYPE_STRING && !name->is_repeated() &&
      element.GetReflection()->HasField(element, name)) {
    where += " ('" + shown(element.GetReflection()->GetString(element, name)) + "')";
  }
  return where;
}

bool find_mismatch(const Message& message, const std::string& where, std::string* why, bool nested = true) {
  const auto* reflection = message.GetReflection();
  const auto& unknown = reflection->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const UnknownField& f = unknown.field(i);
    const FieldDescriptor* declared = message.GetDescriptor()->FindFieldByNumber(f.number());
    if (!declared) continue;
    *why = (where.empty() ? "" : where + ": ") + "field " + std::to_string(f.number()) + " is " +
           wire_name(f.type()) + ", where " + std::string(message.GetDescriptor()->name()) + "'s " +
           std::string(declared->name()) + " (field " + std::to_string(f.number()) + ") is " +
           declared_wire(declared);
    return true;
  }
  if (!nested) return false;
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string prefix = where.empty() ? "" : where + ", ";
    if (!field->is_repeated()) {
      if (find_mismatch(reflection->GetMessage(message, field), prefix + std::string(field->name()), why)) return true;
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      const Message& element = reflection->GetRepeatedMessage(message, field, i);
      if (find_mismatch(element, prefix + element_name(element, field, i), why)) return true;
    }
  }
  return false;
}

// The numbers of the fields a BlobProto (or its shape) does not define, "" if none.
std::string undefined_blob_fields(const BlobProto& proto) {
  std::string numbers = field_numbers(proto.GetReflection()->GetUnknownFields(proto));
  if (proto.has_shape()) {
    const std::string in_shape = field_numbers(proto.shape().GetReflection()->GetUnknownFields(proto.shape()));
    if (!in_shape.empty()) numbers += (numbers.empty() ? "" : "; ") + std::string("in its shape: ") + in_shape;
  }
  return numbers;
}

// BVLC Caffe's layer type names (its REGISTER_LAYER_CLASS list).
bool is_caffe_layer_type(const std::string& type) {
  static const std::set<std::string> types = {
      "AbsVal", "Accuracy", "ArgMax", "BatchNorm", "BatchReindex", "Bias", "BNLL", "Clip", "Concat",
      "ContrastiveLoss", "Convolution", "Crop", "Data", "Deconvolution", "Dropout", "DummyData", "Eltwise", "ELU",
      "Embed", "EuclideanLoss", "Exp", "Filter", "Flatten", "HDF5Data", "HDF5Output", "HingeLoss", "Im2col",
      "ImageData", "InfogainLoss", "InnerProduct", "Input", "Log", "LRN", "LSTM", "LSTMUnit", "MemoryData",
      "MultinomialLogisticLoss", "MVN", "Parameter", "Pooling", "Power", "PReLU", "Python", "Recurrent",
      "Reduction", "ReLU", "Reshape", "RNN", "Scale", "Sigmoid", "SigmoidCrossEntropyLoss", "Silence", "Slice",
      "Softmax", "SoftmaxWithLoss", "Split", "SPP", "Swish", "TanH", "Threshold", "Tile", "WindowData"};
  return types.count(type) > 0;
}

// A field NetParameter does not define is a fork's and kept, unless it holds a whole Caffe
// layer: then a corrupt byte turned a layer's tag (field 100 or 2) into another number, and
// reading on would drop that layer without a word. "" when none does.
std::string layer_under_another_number(const NetParameter& net) {
  const auto& unknown = net.GetReflection()->GetUnknownFields(net);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const UnknownField& f = unknown.field(i);
    if (f.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    std::string name, type;
    LayerParameter layer;
    V1LayerParameter v1;
    if (layer.ParseFromString(f.length_delimited()) && is_caffe_layer_type(layer.type()) &&
        wire_type_mismatch(layer).empty()) {
      name = layer.name();
      type = layer.type();
    } else if (v1.ParseFromString(f.length_delimited()) && v1.has_type() && !v1_layer_type_name(v1.type()).empty() &&
               wire_type_mismatch(v1).empty()) {
      name = v1.name();
      type = v1_layer_type_name(v1.type());
    } else {
      continue;
    }
    return "field " + std::to_string(f.number()) + ", which a NetParameter does not define, holds a whole " + type +
           " layer ('" + shown(name) + "'): the tag of a layer (field 100, or 2 for V1 layers) is corrupt";
  }
  return {};
}

bool has_own_field(const BlobProto& proto) {
  return proto.has_shape() || proto.data_size() || proto.diff_size() || proto.double_data_size() ||
         proto.double_diff_size() || proto.has_num() || proto.has_channels() || proto.has_height() ||
         proto.has_width();
}

}  // namespace

std::string wire_type_mismatch(const Message& message) {
  std::string why;
  find_mismatch(message, "", &why);
  return why;
}

std::string model_problem(const NetParameter& net) {
  if (net.layer_size() == 0 && net.layers_size() == 0) {
    const std::string undefined = field_numbers(net.GetReflection()->GetUnknownFields(net));
    return undefined.empty() ? "it holds no layer" : "it holds no layer, only fields a NetParameter does not define (" + undefined + ")";
  }
  std::string why = wire_type_mismatch(net);
  if (why.empty()) why = layer_under_another_number(net);
  if (!why.empty()) return why;
  // Caffe's upgrade_proto requires 4 input_dim per input, or one input_shape per input; a
  // layer whose tag a corrupt byte turned into input_dim's (a packed list) is caught here.
  if (net.input_dim_size() != 0 && net.input_dim_size() != 4 * net.input_size()) {
    return "it has " + std::to_string(net.input_dim_size()) + " input_dim values for " +
           std::to_string(net.input_size()) + " inputs (Caffe requires 4 per input)";
  }
  if (net.input_shape_size() != 0 && net.input_shape_size() != net.input_size()) {
    return "it has " + std::to_string(net.input_shape_size()) + " input_shape for " + std::to_string(net.input_size()) +
           " inputs (Caffe requires one per input)";
  }
  for (const ModelLayer& layer : model_layers(const_cast<NetParameter*>(&net))) {
    for (int i = 0; i < layer.blobs->size(); ++i) {
      const BlobProto& blob = (*layer.blobs)[i];
      const std::string where = "layer '" + shown(layer.name) + "' blob " + std::to_string(i) + ": ";
      const std::string undefined = undefined_blob_fields(blob);
      if (!undefined.empty()) return where + "fields a BlobProto does not define (" + undefined + ")";
      try {
        const BlobProtoShape shape = blob_proto_shape(blob);  // FromProto's checks, no copy
        const bool doubles = blob.double_diff_size() > 0;
        const std::int64_t diff = doubles ? blob.double_diff_size() : blob.diff_size();
        if (diff != 0 && diff != shape.count) {
          return where + (doubles ? "double_diff has " : "diff has ") + std::to_string(diff) +
                 " values but the shape needs " + std::to_string(shape.count);
        }
      } catch (const Error& e) {
        return where + e.what();
      }
    }
  }
  return {};
}

std::string not_a_blob_proto(const BlobProto& proto, std::int64_t size) {
  const std::string undefined = undefined_blob_fields(proto);
  const std::string mismatch = wire_type_mismatch(proto);
  if (undefined.empty()) {
    if (size > 0 && !has_own_field(proto)) {
      return "not a BlobProto: its " + std::to_string(size) + " bytes set none of BlobProto's fields";
    }
    return {};
  }
  // A NetParameter's layer lists (fields 100 and 2, messages) are never a BlobProto's.
  const auto& unknown = proto.GetReflection()->GetUnknownFields(proto);
  bool layer_lists = false;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    layer_lists |= (f.number() == 100 || f.number() == 2) && f.type() == UnknownField::TYPE_LENGTH_DELIMITED;
  }
  if (layer_lists) {
    NetParameter net;
    // The message's own bytes, its fields of both kinds (protobuf writes the ones it knows
    // first; field order does not change what a NetParameter parse reads). A NetParameter
    // whose own fields all have their wire types is a model file, corrupt or not.
    std::string top_level;
    const bool parsed = net.ParseFromString(proto.SerializeAsString());
    if (parsed && !find_mismatch(net, "", &top_level, false)) {
      const std::string layers = std::to_string(net.layer_size() + net.layers_size()) + " layers";
      const std::string problem = model_problem(net);
      if (!problem.empty()) {
        return "not a BlobProto: it appears to be a Caffe model file (a binary NetParameter with " + layers +
               "), and a corrupt one: " + problem;
      }
      return "not a BlobProto: it appears to be a Caffe model file (a binary NetParameter, .caffemodel) with " +
             layers + "; `blobrt inspect` lists them and blobrt.load_caffemodel reads their weights";
    }
    bool layer_field = false;  // field 100 (`layer`) is only a NetParameter's
    for (int i = 0; i < unknown.field_count(); ++i) layer_field |= unknown.field(i).number() == 100;
    if (layer_field) {
      return "not a BlobProto, nor a valid Caffe model file: it has a NetParameter's layer list (field 100) but " +
             (parsed ? top_level : std::string("does not parse as a NetParameter (truncated or corrupt)"));
    }
  }
  if (!mismatch.empty()) {
    return "not a BlobProto (the file holds another message: a Caffe Datum, a .solverstate?): " + mismatch;
  }
  return std::string("not a BlobProto: it has ") + (has_own_field(proto) ? "" : "none of BlobProto's fields, only ") +
         "fields BlobProto does not define (" + undefined + ")";
}

}  // namespace blobrt::model_check
