// The one rule that decides whether a BlobProto file is binary or text (io.hpp,
// BlobProtoFormatSniffer), used by every reader that is not told the format:
// ReadBlobProtoFromFile (Python's blobrt.load and blobrt.inspect, `blobrt inspect`), and by
// WriteProtoToBinaryFile to refuse a BlobProto the rule would take for text.
//
// Why the first significant byte is enough: protobuf's binary parser accepts fields a
// message does not define, so text such as "shape { dim: 3 }" can parse as a binary
// BlobProto (a different Blob) and "try binary, then text" is not a decision. Every field
// name of BlobProto and BlobShape is lowercase, so a text file starts, after whitespace and
// '#' comments, with a lowercase letter. A binary BlobProto starts with a tag; the lowercase
// letters 0x61-0x7a are tags of fields 12-15, which BlobProto does not have, and the only
// whitespace tag of a defined field with its own wire type is 0x20 (width), which no Caffe
// or blobrt writer puts first (ToProto writes data or shape first; Caffe's legacy writer
// writes num first). The binary writer checks its own output against this rule.
#include "blobrt/io.hpp"

namespace blobrt {

bool BlobProtoFormatSniffer::feed(const void* bytes, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < size && !decided_; ++i) {
    const unsigned char c = p[i];
    if (in_comment_) {
      in_comment_ = c != '\n';
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') continue;
    if (c == '#') {
      in_comment_ = true;
      continue;
    }
    decided_ = true;
    format_ = c >= 'a' && c <= 'z' ? ProtoFormat::kText : ProtoFormat::kBinary;
  }
  return decided_;
}

ProtoFormat DetectBlobProtoFormat(const void* bytes, std::size_t size) {
  BlobProtoFormatSniffer sniffer;
  sniffer.feed(bytes, size);
  return sniffer.format();
}

const char* to_string(ProtoFormat format) { return format == ProtoFormat::kText ? "text" : "binary"; }

}  // namespace blobrt
