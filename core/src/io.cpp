#include "blobrt/io.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/text_format.h>

#include "blobrt/error.hpp"

namespace blobrt {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;

thread_local std::string read_error;

// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

int open_for_reading(const char* filename) {
  if (!filename) throw Error("ReadProto: null file name");
  int fd = ::open(filename, O_RDONLY | O_CLOEXEC);
  if (fd == -1) {
    // Caffe: CHECK_NE(fd, -1) << "File not found: " << filename;
    detail::fail("File not found: ", filename, " (", std::strerror(errno), ")");
  }
  return fd;
}

// Writes `bytes` to a temporary file beside `filename`, fsyncs it, then renames it over
// the target: readers see the old file or the new one, never a partial one.
void write_atomically(const char* filename, const std::string& bytes) {
  if (!filename) throw Error("WriteProto: null file name");
  std::string target(filename);
  std::string temporary = target + ".tmp.XXXXXX";
  int fd = ::mkstemp(temporary.data());
  if (fd == -1) {
    detail::fail("cannot write ", target, ": cannot create a temporary file beside it (",
                 std::strerror(errno), ")");
  }
  auto fail_and_remove = [&](const char* step) {
    int saved = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    detail::fail("cannot write ", target, ": ", step, " failed (", std::strerror(saved), ")");
  };
  // mkstemp creates 0600; give the file the permissions a plain open() would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail_and_remove("fchmod");
  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail_and_remove("write");
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  if (::fsync(fd) != 0) fail_and_remove("fsync");
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(temporary.c_str());
    detail::fail("cannot write ", target, ": close failed (", std::strerror(saved), ")");
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    int saved = errno;
    ::unlink(temporary.c_str());
    detail::fail("cannot write ", target, ": rename failed (", std::strerror(saved), ")");
  }
}

}  // namespace

const std::string& last_read_error() { return read_error; }

bool ReadProtoFromTextFile(const char* filename, Message* proto) {
  read_error.clear();
  Descriptor file{open_for_reading(filename)};
  FileInputStream input(file.fd);
  if (!google::protobuf::TextFormat::Parse(&input, proto)) {
    read_error = std::string(filename) + ": not a valid text-format " + proto->GetTypeName();
    return false;
  }
  return true;
}

void ReadProtoFromTextFileOrDie(const char* filename, Message* proto) {
  if (!ReadProtoFromTextFile(filename, proto)) throw Error(read_error);
}

void WriteProtoToTextFile(const Message& proto, const char* filename) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(proto, &text)) {
    detail::fail("cannot write ", filename ? filename : "(null)", ": text formatting of ",
                 proto.GetTypeName(), " failed");
  }
  write_atomically(filename, text);
}

bool ReadProtoFromBinaryFile(const char* filename, Message* proto) {
  read_error.clear();
  Descriptor file{open_for_reading(filename)};
  FileInputStream raw(file.fd);
  CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);  // as Caffe: up to the 2 GiB protobuf limit
  if (!proto->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    read_error = std::string(filename) + ": not a valid binary " + proto->GetTypeName() +
                 " (truncated, corrupt, or larger than 2 GiB)";
    return false;
  }
  return true;
}

void ReadProtoFromBinaryFileOrDie(const char* filename, Message* proto) {
  if (!ReadProtoFromBinaryFile(filename, proto)) throw Error(read_error);
}

void WriteProtoToBinaryFile(const Message& proto, const char* filename) {
  std::size_t size = proto.ByteSizeLong();
  if (size > static_cast<std::size_t>(INT_MAX)) {
    detail::fail("cannot write ", filename ? filename : "(null)", ": ", proto.GetTypeName(), " is ",
                 size, " bytes, more than a protobuf message can hold (2 GiB)");
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    detail::fail("cannot write ", filename ? filename : "(null)", ": serialising ",
                 proto.GetTypeName(), " failed (missing required fields?)");
  }
  write_atomically(filename, bytes);
}

}  // namespace blobrt
