// What BlobProto reading and model-file reading tell each other (memory/ layer only):
// a file of the one kind read as the other is named for what it appears to be, never
// taken for an empty message.
#ifndef BLOBRT_MEMORY_MODEL_FILE_CHECK_HPP
#define BLOBRT_MEMORY_MODEL_FILE_CHECK_HPP

#include <string>

namespace blobrt {
class BlobProto;
namespace model_check {

// A BlobProto with at least one of its own fields set and no field it does not define.
bool looks_like_blob_proto(const BlobProto& proto);

// "" when `proto`, just parsed from a binary file, may be taken as a BlobProto: it has no
// undefined fields, or has some of its own beside them. Otherwise why not, and what it
// appears to be (a Caffe NetParameter names its layer count).
std::string not_a_blob_proto(const BlobProto& proto);

// Sets what last_read_error() returns (io.cpp keeps it, per thread).
void set_read_error(std::string message);

}  // namespace model_check
}  // namespace blobrt

#endif
