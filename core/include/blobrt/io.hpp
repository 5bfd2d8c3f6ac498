// Caffe's protobuf file helpers (util/io.hpp), for any protobuf Message.
// Readers return false on a missing file or unparsable content (the ...OrDie forms throw
// blobrt::Error naming the file); they never abort. Writers are atomic: the new content
// goes to a temporary file in the same directory that is renamed over the target only
// once complete, so a failed or interrupted write leaves the old file intact. They throw
// blobrt::Error naming the file on failure.
#ifndef BLOBRT_IO_HPP
#define BLOBRT_IO_HPP

#include <string>

#include <google/protobuf/message.h>

namespace blobrt {

using google::protobuf::Message;

bool ReadProtoFromTextFile(const char* filename, Message* proto);
inline bool ReadProtoFromTextFile(const std::string& filename, Message* proto) {
  return ReadProtoFromTextFile(filename.c_str(), proto);
}
void ReadProtoFromTextFileOrDie(const char* filename, Message* proto);
inline void ReadProtoFromTextFileOrDie(const std::string& filename, Message* proto) {
  ReadProtoFromTextFileOrDie(filename.c_str(), proto);
}

void WriteProtoToTextFile(const Message& proto, const char* filename);
inline void WriteProtoToTextFile(const Message& proto, const std::string& filename) {
  WriteProtoToTextFile(proto, filename.c_str());
}

bool ReadProtoFromBinaryFile(const char* filename, Message* proto);
inline bool ReadProtoFromBinaryFile(const std::string& filename, Message* proto) {
  return ReadProtoFromBinaryFile(filename.c_str(), proto);
}
void ReadProtoFromBinaryFileOrDie(const char* filename, Message* proto);
inline void ReadProtoFromBinaryFileOrDie(const std::string& filename, Message* proto) {
  ReadProtoFromBinaryFileOrDie(filename.c_str(), proto);
}

void WriteProtoToBinaryFile(const Message& proto, const char* filename);
inline void WriteProtoToBinaryFile(const Message& proto, const std::string& filename) {
  WriteProtoToBinaryFile(proto, filename.c_str());
}

// Why the last Read... on this thread returned false ("" if it succeeded).
const std::string& last_read_error();

}  // namespace blobrt

#endif  // BLOBRT_IO_HPP
