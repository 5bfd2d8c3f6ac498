// libFuzzer: arbitrary text as a text-format BlobProto, then Blob<float>::FromProto.
#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "blobrt/blob.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  blobrt::BlobProto proto;
  struct Quiet : google::protobuf::io::ErrorCollector {
    void AddError(int, int, const std::string&) override {}
  } quiet;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&quiet);
  parser.AllowPartialMessage(true);
  if (!parser.ParseFromString(std::string(reinterpret_cast<const char*>(data), size), &proto)) return 0;
  try {
    blobrt::Blob<float> f;
    f.FromProto(proto, true);
    f.asum_data();
  } catch (const blobrt::Error&) {
  }
  return 0;
}
