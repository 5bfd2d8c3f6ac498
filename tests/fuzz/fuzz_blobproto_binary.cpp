// libFuzzer: arbitrary bytes as a binary BlobProto, then Blob<float>/<double>::FromProto.
// Anything may be rejected (false or blobrt::Error); nothing may crash, leak or hang.
#include <cstddef>
#include <cstdint>

#include "blobrt/blob.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  blobrt::BlobProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    blobrt::Blob<float> f;
    f.FromProto(proto, true);
    blobrt::BlobProto back;
    f.ToProto(&back, true);
  } catch (const blobrt::Error&) {
  }
  try {
    blobrt::Blob<double> d(1, 1, 1, 1);
    d.FromProto(proto, false);
  } catch (const blobrt::Error&) {
  }
  return 0;
}
