// What BlobProto reading and model-file reading tell each other (memory/ layer only):
// a file of the one kind read as the other is named for what it appears to be, never
// taken for an empty or made-up message, and a file whose bytes do not parse as the
// message it claims (a field of the wrong wire type, which protobuf's lenient parse keeps
// as an unknown field) is refused with the field that gives it away.
#ifndef BLOBRT_MEMORY_MODEL_FILE_CHECK_HPP
#define BLOBRT_MEMORY_MODEL_FILE_CHECK_HPP

#include <cstdint>
#include <string>

#include <google/protobuf/message.h>

namespace blobrt {
class BlobProto;
class NetParameter;
namespace model_check {

// "" when no field of `message`, or of a message inside it, has a number the message
// declares but another wire type (protobuf keeps such a field as unknown instead of
// failing); else the first one, where it is and what was expected.
std::string wire_type_mismatch(const google::protobuf::Message& message);

// "" when `proto`, parsed from `size` binary bytes, is a BlobProto: no field it does not
// define (its shape's included), no field of the wrong wire type, and, when the bytes are
// not empty, at least one of its own fields. Otherwise why not, and what it appears to be
// (a Caffe NetParameter names its layer count, or what is corrupt in it).
std::string not_a_blob_proto(const BlobProto& proto, std::int64_t size);

// "" when `net` is a consistent Caffe model: at least one layer, no field of the wrong
// wire type anywhere, every layer's blobs BlobProtos (nothing they do not define) whose
// values fit their shapes (Blob::FromProto would read them). Fields a NetParameter or a
// layer does not define are allowed (Caffe's layer parameters, a fork's extra fields).
std::string model_problem(const NetParameter& net);

// Sets what last_read_error() returns (io.cpp keeps it, per thread).
void set_read_error(std::string message);

}  // namespace model_check
}  // namespace blobrt

#endif
