// Caffe's protobuf file helpers (util/io.hpp), for any protobuf Message.
// Readers throw blobrt::Error naming the file when it cannot be opened or is a directory
// (Caffe's CHECK aborted on a missing file) and return false on unparsable content, with
// last_read_error() saying why (the ...OrDie forms throw that too); they never abort.
// Writers are atomic: the new content goes to a temporary file in the same directory that
// replaces the target only once complete, so a failed or interrupted write leaves the old
// file intact. They throw blobrt::Error naming the file on failure.
#ifndef BLOBRT_IO_HPP
#define BLOBRT_IO_HPP

#include <cstddef>
#include <string>

#include <google/protobuf/message.h>

namespace blobrt {

using google::protobuf::Message;
class BlobProto;

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

// Binary or text: how a BlobProto file is decided when the reader is not told.
enum class ProtoFormat { kBinary, kText };
const char* to_string(ProtoFormat format);

// The one rule (core/src/memory/proto_format.cpp explains why it is safe): skip leading
// whitespace (space, \t, \n, \v, \f, \r) and '#' comments up to the end of their line;
// if the first byte left is a lowercase ASCII letter (every BlobProto field name starts
// with one) the file is text, any other byte makes it binary; a file with nothing left
// (empty, or only whitespace and comments) is text, the empty message. It looks at as few
// bytes as it needs, so a pipe is decided from its first chunk.
class BlobProtoFormatSniffer {
 public:
  // Feeds the next bytes; true once the format is decided (later bytes change nothing).
  bool feed(const void* bytes, std::size_t size);
  bool decided() const { return decided_; }
  // The decision, or kText while undecided (nothing significant seen yet).
  ProtoFormat format() const { return format_; }

 private:
  bool decided_ = false;
  bool in_comment_ = false;
  ProtoFormat format_ = ProtoFormat::kText;
};
ProtoFormat DetectBlobProtoFormat(const void* bytes, std::size_t size);

// Reads a BlobProto file of either format: the file (or pipe, FIFO, device) is read once,
// its format decided by BlobProtoFormatSniffer, and only that format is parsed; no second
// guess, so a file never turns into a different Blob by parsing as the other format.
// Returns false with last_read_error() naming the file and the format it was read as;
// *format (if given) receives the decision. Used by blobrt.load, blobrt.inspect and
// `blobrt inspect`. WriteProtoToBinaryFile refuses a BlobProto whose bytes this rule would
// take for text (only possible with fields BlobProto does not define, or a legacy width
// before every other field), so whatever blobrt writes reads back.
bool ReadBlobProtoFromFile(const char* filename, BlobProto* proto, ProtoFormat* format = nullptr);
inline bool ReadBlobProtoFromFile(const std::string& filename, BlobProto* proto, ProtoFormat* format = nullptr) {
  return ReadBlobProtoFromFile(filename.c_str(), proto, format);
}
void ReadBlobProtoFromFileOrDie(const char* filename, BlobProto* proto, ProtoFormat* format = nullptr);
inline void ReadBlobProtoFromFileOrDie(const std::string& filename, BlobProto* proto, ProtoFormat* format = nullptr) {
  ReadBlobProtoFromFileOrDie(filename.c_str(), proto, format);
}

// Why the last Read... on this thread returned false ("" if it succeeded).
const std::string& last_read_error();

}  // namespace blobrt

#endif  // BLOBRT_IO_HPP
