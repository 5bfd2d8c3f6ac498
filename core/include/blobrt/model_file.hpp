// Caffe's model files (.caffemodel: a binary caffe.NetParameter) read and written without
// Caffe: each layer's name, type and weight blobs, in the current `layer` layout and the
// older V1 `layers` (and V0) ones. Only the weights are interpreted; every other field of
// the file (a layer's parameters, a fork's own NetParameter fields) is kept as protobuf keeps
// unknown fields, so a file written back after weights were changed is the file Caffe wrote
// but for those weights, and Caffe loads it.
#ifndef BLOBRT_MODEL_FILE_HPP
#define BLOBRT_MODEL_FILE_HPP

#include <string>
#include <vector>

#include <google/protobuf/repeated_field.h>

namespace blobrt {

class BlobProto;
class NetParameter;

struct ModelLayer {
  std::string name;
  // Caffe's current type name ("Convolution"); V1's enum and V0's strings translated as
  // Caffe's upgrade_proto does ("CONVOLUTION" / "conv" -> "Convolution").
  std::string type;
  // Where the file keeps it: "layer" (current), "layers" (V1) or "layers.layer" (V0).
  std::string layout;
  google::protobuf::RepeatedPtrField<BlobProto>* blobs;
};

// The layers of `net` in file order, with pointers into it (valid while `net` lives).
std::vector<ModelLayer> model_layers(NetParameter* net);

// Reads a binary NetParameter. False (nothing thrown) when the file is not one, or not a
// consistent one, with last_read_error() naming the file and why: no layer in either layout
// (then what it appears to be: a BlobProto, say), a field of the wrong wire type, a blob with
// fields a BlobProto does not define or values that do not fit its shape, a whole Caffe layer
// under a field number other than 100/2, input_dim not 4 per input (what corrupt bytes give).
// Fields a NetParameter does not define (a fork's) are kept and written back. Throws
// blobrt::Error naming the file when it cannot be opened, OutOfMemoryError naming it and its
// size when memory runs out reading it. Files up to protobuf's 2 GiB, as Caffe reads them; a
// larger one is refused from its size.
bool ReadModelFile(const std::string& filename, NetParameter* net);
void ReadModelFileOrDie(const std::string& filename, NetParameter* net);

// Caffe's current type name for a V1LayerParameter.LayerType value; "" for NONE or an
// unknown value.
std::string v1_layer_type_name(int type);
// Caffe's current type name for a V0 type string ("conv", "innerproduct", ...); the string
// itself when it is not one of V0's.
std::string v0_layer_type_name(const std::string& type);

}  // namespace blobrt

#endif  // BLOBRT_MODEL_FILE_HPP
