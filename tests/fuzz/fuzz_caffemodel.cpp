// libFuzzer: corrupted Caffe model files (seeds: small models in the current, V1 and V0
// layouts, tests/fuzz/corpus/caffemodel), read as `blobrt inspect` and blobrt.load_caffemodel
// read them: the bytes are a file (a memfd, through /proc/self/fd) given to ReadModelFile,
// then to ReadBlobProtoFromFile. Each read must either fail with blobrt's reason naming the
// file (false, or a blobrt::Error) or give a consistent result: every blob of the model has
// values that fit its shape, and the model written and read back is the same message; a
// BlobProto read must be one Blob::FromProto takes. Anything else traps or escapes as another
// exception: a finding (issue 48: corrupt models were read as empty Blobs).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "blobrt.pb.h"
#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/model_file.hpp"

namespace {

// The memfd the input is written to, and its path.
const std::string& input_path(int* fd) {
  static int file = ::memfd_create("fuzz.caffemodel", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(file);
  *fd = file;
  return path;
}

// A refusal must say which file and why.
void check_refusal(const std::string& path) {
  if (blobrt::last_read_error().find(path) == std::string::npos) __builtin_trap();
}

void check_model(const std::string& path) {
  blobrt::NetParameter net;
  bool read = false;
  try {
    read = blobrt::ReadModelFile(path, &net);
  } catch (const blobrt::Error& e) {
    if (std::string(e.what()).find(path) == std::string::npos) __builtin_trap();
    return;
  }
  if (!read) return check_refusal(path);
  for (const blobrt::ModelLayer& layer : blobrt::model_layers(&net)) {
    for (const blobrt::BlobProto& blob : *layer.blobs) {
      try {
        (void)blobrt::blob_proto_shape(blob);  // a consistent model: FromProto takes every blob
      } catch (const blobrt::Error&) {
        __builtin_trap();
      }
    }
  }
  blobrt::NetParameter again;
  if (!again.ParseFromString(net.SerializeAsString()) || again.SerializeAsString() != net.SerializeAsString()) {
    __builtin_trap();
  }
}

void check_blob(const std::string& path) {
  blobrt::BlobProto proto;
  bool read = false;
  try {
    read = blobrt::ReadBlobProtoFromFile(path, &proto);
  } catch (const blobrt::Error& e) {
    if (std::string(e.what()).find(path) == std::string::npos) __builtin_trap();
    return;
  }
  if (!read) return check_refusal(path);
  try {
    blobrt::Blob<float> blob;
    blob.FromProto(proto, true);
  } catch (const blobrt::Error&) {
    // A BlobProto whose values do not fit its shape: FromProto's own, clear, refusal.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = -1;
  const std::string& path = input_path(&fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) return 0;
  if (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  check_model(path);
  check_blob(path);
  return 0;
}
