#include "blobrt/io.hpp"

#include <cerrno>
#include <cstdint>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/wire_format_lite.h>

#include "blobrt.pb.h"
#include "blobrt/error.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "environment.hpp"

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

// Writes through `write(fd)` into a temporary file beside `filename`, then swaps it with
// the target: readers, and a process killed at any point, see the old file or the new one,
// never a partial one. The swap is renameat2(RENAME_EXCHANGE) followed by unlinking the
// old file, which costs 20 ms for 64 MiB here where rename() over an existing file costs
// 100 ms: ext4 (auto_da_alloc) flushes the new file to disk inside such a rename. That
// flush is what protects against a power loss, so BLOBRT_SYNC_WRITES=1 restores it
// explicitly: fsync of the file, rename(), fsync of the directory (docs/io.md).
template <typename Write>
void write_atomically(const char* filename, Write write) {
  if (!filename) throw Error("WriteProto: null file name");
  std::string target(filename);
  std::string temporary = target + ".tmp.XXXXXX";
  int fd = ::mkstemp(temporary.data());
  if (fd == -1) {
    detail::fail("cannot write ", target, ": cannot create a temporary file beside it (",
                 std::strerror(errno), ")");
  }
  auto fail_and_remove = [&](const std::string& step, int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    detail::fail("cannot write ", target, ": ", step, " failed (", std::strerror(error), ")");
  };
  // mkstemp creates 0600; give the file the permissions a plain open() would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail_and_remove("fchmod", errno);
  std::string step;
  int error = write(fd, &step);
  if (!step.empty()) fail_and_remove(step, error);
  auto sync = environment::get("BLOBRT_SYNC_WRITES");
  bool durable = sync && *sync == "1";
  if (durable && ::fsync(fd) != 0) fail_and_remove("fsync", errno);
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(temporary.c_str());
    detail::fail("cannot write ", target, ": close failed (", std::strerror(saved), ")");
  }
  bool swapped = !durable && ::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0;
  if (swapped) {
    ::unlink(temporary.c_str());  // now the old content
  } else if (::rename(temporary.c_str(), target.c_str()) != 0) {  // no target yet, or no RENAME_EXCHANGE
    int saved = errno;
    ::unlink(temporary.c_str());
    detail::fail("cannot write ", target, ": rename failed (", std::strerror(saved), ")");
  }
  if (durable) {
    std::string directory = target.find('/') == std::string::npos ? "." : target.substr(0, target.rfind('/') + 1);
    int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
}

// Serialises a message into fd through protobuf's own stream, in 1 MiB blocks: no copy of
// the whole message in memory.
int serialize_to(int fd, std::string* step, const std::function<bool(google::protobuf::io::ZeroCopyOutputStream*)>& print) {
  google::protobuf::io::FileOutputStream out(fd, 1 << 20);
  bool ok = print(&out) && out.Flush();
  if (!ok) {
    *step = out.GetErrno() ? "write" : "serialisation";
    return out.GetErrno() ? out.GetErrno() : EINVAL;
  }
  return 0;
}

// Keeps the first error a text parse reports, with its position.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (text.empty()) text = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " + message;
  }
  std::string text;
};

// Before a BlobProto is parsed, its value fields get their final capacity on huge pages:
// parsing clears a message but keeps field capacity, so the packed values are then copied
// into memory that faults in 2 MiB at a time (32 faults for 64 MiB instead of 16,384,
// about 25 ms here). The lengths come from a scan that skips over every field.
void reserve_value_fields(const std::uint8_t* data, int size, BlobProto* blob) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream input(data, size);
  input.SetTotalBytesLimit(INT_MAX);
  std::uint64_t bytes[10] = {};
  while (std::uint32_t tag = input.ReadTag()) {
    int field = WireFormatLite::GetTagFieldNumber(tag);
    if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::uint32_t length = 0;
      if (!input.ReadVarint32(&length) || !input.Skip(static_cast<int>(length))) return;
      if (field >= 5 && field <= 9) bytes[field] += length;
    } else if (!WireFormatLite::SkipField(&input, tag)) {
      return;  // malformed: the real parse will say so
    }
  }
  auto reserve = [](auto* field, std::uint64_t length, std::size_t element) {
    std::uint64_t count = length / element;
    if (count == 0 || count > static_cast<std::uint64_t>(INT_MAX)) return;
    field->Reserve(static_cast<int>(count));
    blobrt_kernels::advise_huge_pages(field->mutable_data(), count * element);
  };
  reserve(blob->mutable_data(), bytes[5], sizeof(float));
  reserve(blob->mutable_diff(), bytes[6], sizeof(float));
  reserve(blob->mutable_double_data(), bytes[8], sizeof(double));
  reserve(blob->mutable_double_diff(), bytes[9], sizeof(double));
}

// Pipes, devices, empty or huge files: protobuf's stream parser, in 1 MiB reads.
bool parse_stream(int fd, Message* proto) {
  FileInputStream raw(fd, 1 << 20);
  CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);  // as Caffe: up to the 2 GiB protobuf limit
  return proto->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

}  // namespace

const std::string& last_read_error() { return read_error; }

bool ReadProtoFromTextFile(const char* filename, Message* proto) {
  read_error.clear();
  Descriptor file{open_for_reading(filename)};
  FileInputStream input(file.fd, 1 << 20);
  // The parser's complaints go into last_read_error(), not onto stderr.
  FirstError errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.Parse(&input, proto)) {
    read_error = std::string(filename) + ": not a valid text-format " + proto->GetTypeName() +
                 (errors.text.empty() ? "" : " (" + errors.text + ")");
    return false;
  }
  return true;
}

void ReadProtoFromTextFileOrDie(const char* filename, Message* proto) {
  if (!ReadProtoFromTextFile(filename, proto)) throw Error(read_error);
}

void WriteProtoToTextFile(const Message& proto, const char* filename) {
  write_atomically(filename, [&](int fd, std::string* step) {
    return serialize_to(fd, step, [&](google::protobuf::io::ZeroCopyOutputStream* out) {
      return google::protobuf::TextFormat::Print(proto, out);
    });
  });
}

bool ReadProtoFromBinaryFile(const char* filename, Message* proto) {
  read_error.clear();
  Descriptor file{open_for_reading(filename)};
  struct stat st {};
  bool parsed = false;
  if (::fstat(file.fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < INT_MAX) {
    // A regular file is mapped and parsed in place: no read() copy, pages pre-faulted.
    void* mapped = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                          file.fd, 0);
    if (mapped != MAP_FAILED) {
      if (auto* blob = dynamic_cast<BlobProto*>(proto)) {
        reserve_value_fields(static_cast<const std::uint8_t*>(mapped), static_cast<int>(st.st_size), blob);
      }
      parsed = proto->ParseFromArray(mapped, static_cast<int>(st.st_size));
      ::munmap(mapped, static_cast<std::size_t>(st.st_size));
    } else {
      parsed = parse_stream(file.fd, proto);
    }
  } else {
    parsed = parse_stream(file.fd, proto);
  }
  if (!parsed) {
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
  if (!proto.IsInitialized()) {
    detail::fail("cannot write ", filename ? filename : "(null)", ": ", proto.GetTypeName(),
                 " lacks required fields: ", proto.InitializationErrorString());
  }
  write_atomically(filename, [&](int fd, std::string* step) {
    return serialize_to(fd, step, [&](google::protobuf::io::ZeroCopyOutputStream* out) {
      return proto.SerializeToZeroCopyStream(out);
    });
  });
}

}  // namespace blobrt
