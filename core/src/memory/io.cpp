#include "blobrt/io.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/wire_format_lite.h>

#include "blobrt.pb.h"
#include "blobrt/error.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/parallel.hpp"
#include "blobrt/environment.hpp"
#include "atomic_file.hpp"
#include "file_kind.hpp"
#include "model_file_check.hpp"

namespace blobrt {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;

thread_local std::string read_error;

// The most any reader takes in: what one protobuf message can hold (2 GiB). Text files
// and endless inputs (a FIFO, /dev/zero) stop there too.
constexpr int kMaxMessageBytes = INT_MAX;

// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// What a reader opens: a file, a pipe or a device, never a directory (whose read() only
// fails later with EISDIR).
int open_for_reading(const char* filename) {
  if (!filename) throw Error("ReadProto: null file name");
  int fd = ::open(filename, O_RDONLY | O_CLOEXEC);
  if (fd == -1) {
    // Caffe: CHECK_NE(fd, -1) << "File not found: " << filename;
    detail::fail("File not found: ", filename, " (", std::strerror(errno), ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    detail::fail("cannot read ", filename, ": it is a directory");
  }
  return fd;
}

// The path a write really replaces: symbolic links are followed (up to 40, as the kernel
// does), so a link to weights.caffemodel stays a link and its target gets the content.
std::string follow_links(const std::string& path) {
  std::string current = path;
  for (int depth = 0; depth < 40; ++depth) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    std::string link(PATH_MAX, '\0');
    ssize_t n = ::readlink(current.c_str(), link.data(), link.size());
    if (n < 0) detail::fail("cannot write ", path, ": readlink ", current, " failed (", std::strerror(errno), ")");
    link.resize(static_cast<std::size_t>(n));
    std::size_t slash = current.rfind('/');
    if (link[0] != '/' && slash != std::string::npos) link = current.substr(0, slash + 1) + link;
    current = link;
  }
  detail::fail("cannot write ", path, ": too many levels of symbolic links");
}

// The process umask, read without changing it: umask(0); umask(old) would give files that
// another thread creates meanwhile mode 0666.
mode_t current_umask() {
  if (FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status)) found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(status);
    if (found) return static_cast<mode_t>(mask);
  }
  mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}

// Writes through `write(fd)` into a temporary file beside the target, then swaps it in:
// readers, and a process killed at any point, see the old file or the new one, never a
// partial one (common/atomic_file.hpp). The target is `filename` with symbolic links
// followed; only a regular file (or none) is ever replaced, and it keeps its mode and, where
// permitted, its owner. A hard-linked target gets a new inode: its other names keep the old
// content (docs/differences-from-caffe.md). The swap is renameat2(RENAME_EXCHANGE) and an
// unlink of the old file, which avoids ext4's flush inside a rename over an existing file;
// that flush is what protects against a power loss, so BLOBRT_SYNC_WRITES=1 makes it
// explicit: fsync of the file, rename(), fsync of the directory (docs/hardening.md).
template <typename Write>
void write_atomically(const char* filename, Write write) {
  if (!filename) throw Error("WriteProto: null file name");
  if (!*filename) throw Error("WriteProto: empty file name");
  const std::string target = follow_links(filename);
  const std::string shown = target == filename ? target : std::string(filename) + " (-> " + target + ")";
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    detail::fail("cannot write ", shown, ": it is ", file_kind(existing.st_mode),
                 ", not a regular file (nothing was changed)");
  }
  atomic_file::Replacement file(target);
  if (!file.created()) {
    int error = file.creation_error();
    detail::fail("cannot write ", shown, ": cannot create a temporary file in directory ", file.directory(), " (",
                 std::strerror(error), error == EACCES || error == EROFS ? "; the directory must be writable" : "",
                 ")");
  }
  auto fail = [&](const std::string& step, int error) {
    detail::fail("cannot write ", shown, ": ", step, " failed (", std::strerror(error), ")");
  };
  // mkostemp creates 0600: give the file the old one's mode and owner, or what open() would.
  mode_t mode = exists ? (existing.st_mode & 07777) : (0666 & ~current_umask());
  if (::fchmod(file.fd(), mode) != 0) fail("fchmod", errno);
  if (exists && (existing.st_uid != ::geteuid() || existing.st_gid != ::getegid()) &&
      ::fchown(file.fd(), existing.st_uid, existing.st_gid) != 0 && errno != EPERM) {
    fail("fchown", errno);
  }
  std::string step;
  int error = write(file.fd(), &step);
  if (!step.empty()) fail(step, error);
  auto sync = environment::get("BLOBRT_SYNC_WRITES");
  if (atomic_file::Failure failed = file.commit(sync && *sync == "1")) fail(failed.step, failed.error);
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

// Passes writes on until `limit` bytes have gone through, then fails the next request for
// space, so a too long text output stops there instead of after writing all of it.
class CappedOutput : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  CappedOutput(google::protobuf::io::ZeroCopyOutputStream* out, std::int64_t limit) : out_(out), limit_(limit) {}
  bool Next(void** data, int* size) override {
    if (out_->ByteCount() > limit_) {
      over_ = true;
      return false;
    }
    return out_->Next(data, size);
  }
  void BackUp(int count) override { out_->BackUp(count); }
  std::int64_t ByteCount() const override { return out_->ByteCount(); }
  bool over() const { return over_ || out_->ByteCount() > limit_; }

 private:
  google::protobuf::io::ZeroCopyOutputStream* out_;
  std::int64_t limit_;
  bool over_ = false;
};

// Keeps the first error a text parse reports, with its position.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (text.empty()) text = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " + message;
  }
  std::string text;
};

// The text parser reads on to the end of its input after its first error; this input ends
// as soon as there is one, so that /dev/zero fails at once instead of after 2 GiB.
class EndAtFirstError : public google::protobuf::io::ZeroCopyInputStream {
 public:
  EndAtFirstError(google::protobuf::io::ZeroCopyInputStream* input, const FirstError* errors)
      : input_(input), errors_(errors) {}
  bool Next(const void** data, int* size) override { return errors_->text.empty() && input_->Next(data, size); }
  void BackUp(int count) override { input_->BackUp(count); }
  bool Skip(int count) override { return input_->Skip(count); }
  std::int64_t ByteCount() const override { return input_->ByteCount(); }

 private:
  google::protobuf::io::ZeroCopyInputStream* input_;
  const FirstError* errors_;
};

// Before a BlobProto is parsed, its value fields get their final capacity on huge pages:
// parsing clears a message but keeps field capacity, so the packed values are then copied
// into memory that faults in 2 MiB at a time (32 faults for 64 MiB instead of 16,384; the
// load times are in docs/performance.md). The lengths come from a scan that skips over
// every field.
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

// A whole file's bytes, on huge pages when large (read() then faults in 2 MiB at a time).
using HostBuffer = std::unique_ptr<std::uint8_t, decltype(&std::free)>;

// Reads the whole regular file `opened` describes, in chunks split across cores (pread:
// the copy out of the page cache is most of a load's time). If the file is not the same
// afterwards, shorter, longer or modified (another process rewriting it in place), says
// so in *changed instead of handing on a mixture.
HostBuffer read_whole(int fd, const struct stat& opened, std::string* changed) {
  const auto size = static_cast<std::size_t>(opened.st_size);
  HostBuffer buffer(static_cast<std::uint8_t*>(blobrt_kernels::allocate_host(size, 64)), &std::free);
  if (!buffer) throw std::bad_alloc();
  std::atomic<int> failure{0};
  std::atomic<bool> short_read{false};
  blobrt_kernels::parallel_for(
      static_cast<std::int64_t>(size),
      [&](std::int64_t begin, std::int64_t end) {
        while (begin < end) {
          ssize_t n = ::pread(fd, buffer.get() + begin, static_cast<std::size_t>(end - begin), begin);
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) failure = errno;
          if (n == 0) short_read = true;
          if (n <= 0) return;
          begin += n;
        }
      },
      std::int64_t(8) << 20);
  if (failure) {
    *changed = std::string("read failed (") + std::strerror(failure) + ")";
    return buffer;
  }
  char extra;
  struct stat after {};
  bool same = !short_read && ::pread(fd, &extra, 1, opened.st_size) == 0 && ::fstat(fd, &after) == 0 &&
              after.st_size == opened.st_size && after.st_mtim.tv_sec == opened.st_mtim.tv_sec &&
              after.st_mtim.tv_nsec == opened.st_mtim.tv_nsec;
  if (!same) {
    *changed = "the file changed while being read (" + std::to_string(size) + " bytes when opened, " +
               std::to_string(after.st_size) + " after); is another process writing it?";
  }
  return buffer;
}

// Pipes, devices, empty or huge files: protobuf's stream parser, in 1 MiB reads, up to the
// 2 GiB a protobuf message can hold (as Caffe), so an endless input ends there.
// *consumed (if given) receives how many bytes were read.
bool parse_stream(google::protobuf::io::ZeroCopyInputStream* raw, Message* proto, std::int64_t* consumed = nullptr) {
  CodedInputStream coded(raw);
  coded.SetTotalBytesLimit(kMaxMessageBytes);
  const bool parsed = proto->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  if (consumed) *consumed = coded.CurrentPosition();
  return parsed;
}

// Parses text format from `raw` (at most 2 GiB of it); on failure read_error names the file,
// the format and the parser's first complaint with its position.
bool parse_text(google::protobuf::io::ZeroCopyInputStream* raw, const char* filename, Message* proto) {
  google::protobuf::io::LimitingInputStream limited(raw, kMaxMessageBytes);
  // The parser's complaints go into last_read_error(), not onto stderr.
  FirstError errors;
  EndAtFirstError input(&limited, &errors);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.Parse(&input, proto)) {
    read_error = std::string(filename) + ": not a valid text-format " + proto->GetTypeName() +
                 (errors.text.empty() ? "" : " (" + errors.text + ")");
    if (limited.ByteCount() >= kMaxMessageBytes) {
      read_error += "; stopped after " + std::to_string(kMaxMessageBytes) + " bytes, the most a message can hold";
    }
    return false;
  }
  return true;
}

// A whole binary message already in memory.
bool parse_binary(const std::uint8_t* bytes, int size, Message* proto) {
  if (auto* blob = dynamic_cast<BlobProto*>(proto)) reserve_value_fields(bytes, size, blob);
  return proto->ParseFromArray(bytes, size);
}

std::string binary_error(const char* filename, const Message& proto) {
  return std::string(filename) + ": not a valid binary " + proto.GetTypeName() +
         " (truncated, corrupt, or larger than 2 GiB)";
}

// A binary BlobProto's first byte is the tag of its lowest-numbered field (protobuf writes
// defined fields in number order, unknown ones last). Only two cases can make it whitespace,
// '#' or a lowercase letter, which ReadBlobProtoFromFile would read as text: width set
// without num, channels or height (its tag is 0x20, a space), or fields BlobProto does not
// define with nothing before them. Only then are the bytes made and checked.
void refuse_if_read_as_text(const BlobProto& blob, const char* filename) {
  if (blob.has_num() || blob.has_channels() || blob.has_height()) return;
  if (!blob.has_width() && blob.GetReflection()->GetUnknownFields(blob).empty()) return;
  const std::string bytes = blob.SerializeAsString();
  if (bytes.empty() || DetectBlobProtoFormat(bytes.data(), bytes.size()) == ProtoFormat::kBinary) return;
  detail::fail("cannot write ", filename ? filename : "(null)",
               ": this BlobProto's binary form starts like text (legacy width ", blob.width(),
               " before num, channels and height, or undefined fields), so ReadBlobProtoFromFile, "
               "blobrt.load and blobrt inspect would read it as text; set num, channels and height "
               "too, or write it as text (nothing was written)");
}

// "1073741824 bytes (1.0 GiB)".
std::string size_text(std::int64_t bytes) {
  char scaled[32];
  std::snprintf(scaled, sizeof scaled, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  if (bytes < (std::int64_t(1) << 30)) {
    std::snprintf(scaled, sizeof scaled, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return std::to_string(bytes) + " bytes (" + scaled + ")";
}

// A regular file larger than a message can be is refused from its size, before a byte of it
// is read (reading 2 GiB only to fail took half a minute and as much memory).
bool refuse_oversized(const char* filename, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= kMaxMessageBytes) return false;
  read_error = std::string(filename) + ": the file is " + size_text(st.st_size) +
               ", more than a protobuf message can hold (2 GiB, " + std::to_string(kMaxMessageBytes) +
               " bytes), so it cannot be one; nothing was read";
  return true;
}

// Runs a reader; memory running out while it reads or parses becomes an OutOfMemoryError that
// names the file and its size (a bare std::bad_alloc named nothing), the message left empty.
template <typename Read>
bool naming_the_file_when_out_of_memory(const char* filename, int fd, Message* proto, Read read) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    if (proto) proto->Clear();
    struct stat st {};  // the file being read, not whatever has its name by now
    const bool sized = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    detail::fail_as<OutOfMemoryError>(filename ? filename : "(null)", ": out of memory while reading it (",
                                      sized ? "the file is " + size_text(st.st_size) : std::string("not a regular file"),
                                      "; parsed, a message takes about as much memory again); nothing was read");
  }
}

// "" when a binary BlobProto just parsed from `size` bytes is one (model_check::not_a_blob_proto);
// otherwise read_error names the file and why, and the message is cleared.
bool accept_blob_proto(const char* filename, BlobProto* proto, std::int64_t size) {
  const std::string why = model_check::not_a_blob_proto(*proto, size);
  if (why.empty()) return true;
  read_error = std::string(filename) + ": " + why;
  proto->Clear();
  return false;
}

}  // namespace

const std::string& last_read_error() { return read_error; }

void model_check::set_read_error(std::string message) { read_error = std::move(message); }

bool ReadProtoFromTextFile(const char* filename, Message* proto) {
  read_error.clear();
  Descriptor file{open_for_reading(filename)};
  if (refuse_oversized(filename, file.fd)) return false;
  return naming_the_file_when_out_of_memory(filename, file.fd, proto, [&] {
    FileInputStream raw(file.fd, 1 << 20);
    return parse_text(&raw, filename, proto);
  });
}

void ReadProtoFromTextFileOrDie(const char* filename, Message* proto) {
  if (!ReadProtoFromTextFile(filename, proto)) throw Error(read_error);
}

void WriteProtoToTextFile(const Message& proto, const char* filename) {
  write_atomically(filename, [&](int fd, std::string* step) {
    bool too_long = false;
    int error = serialize_to(fd, step, [&](google::protobuf::io::ZeroCopyOutputStream* out) {
      CappedOutput capped(out, kMaxMessageBytes);
      bool printed = google::protobuf::TextFormat::Print(proto, &capped);
      too_long = capped.over();
      return printed && !too_long;
    });
    if (too_long) {
      // The reader stops at 2 GiB: a longer text file would be one it refuses.
      *step = "text serialisation (the text form is over " + std::to_string(kMaxMessageBytes) +
              " bytes, more than ReadProtoFromTextFile reads; write it as binary, which holds 4 to 8 times as many "
              "values, or split it; nothing was written)";
      return EINVAL;
    }
    return error;
  });
}

bool ReadProtoFromBinaryFile(const char* filename, Message* proto) {
  read_error.clear();
  Descriptor file{open_for_reading(filename)};
  if (refuse_oversized(filename, file.fd)) return false;
  return naming_the_file_when_out_of_memory(filename, file.fd, proto, [&] {
    struct stat st {};
    bool parsed = false;
    std::int64_t size = 0;
    if (::fstat(file.fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= kMaxMessageBytes) {
      // A regular file is read whole with read(), not mapped: a file that another process
      // truncates meanwhile then gives a short read (an error here) instead of SIGBUS.
      std::string changed;
      HostBuffer bytes = read_whole(file.fd, st, &changed);
      if (!changed.empty()) {
        read_error = std::string(filename) + ": " + changed;
        return false;
      }
      parsed = parse_binary(bytes.get(), static_cast<int>(st.st_size), proto);
      size = st.st_size;
    } else {
      FileInputStream raw(file.fd, 1 << 20);
      parsed = parse_stream(&raw, proto, &size);
    }
    if (!parsed) {
      read_error = binary_error(filename, *proto);
      proto->Clear();  // what a failed parse left is no message
      return false;
    }
    // Whatever protobuf's leniency: a file of another message is not a BlobProto.
    if (auto* blob = dynamic_cast<BlobProto*>(proto)) return accept_blob_proto(filename, blob, size);
    return true;
  });
}

void ReadProtoFromBinaryFileOrDie(const char* filename, Message* proto) {
  if (!ReadProtoFromBinaryFile(filename, proto)) throw Error(read_error);
}

bool ReadBlobProtoFromFile(const char* filename, BlobProto* proto, ProtoFormat* format) {
  read_error.clear();
  if (!proto) throw Error("ReadBlobProtoFromFile: null BlobProto");
  Descriptor file{open_for_reading(filename)};
  if (refuse_oversized(filename, file.fd)) return false;
  return naming_the_file_when_out_of_memory(filename, file.fd, proto, [&] {
    struct stat st {};
    ProtoFormat decided = ProtoFormat::kText;
    bool parsed = false;
    std::int64_t size = 0;
    if (::fstat(file.fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= kMaxMessageBytes) {
      // A regular file: read whole once (as ReadProtoFromBinaryFile), decided, parsed from memory.
      std::string changed;
      HostBuffer bytes = read_whole(file.fd, st, &changed);
      if (!changed.empty()) {
        read_error = std::string(filename) + ": " + changed;
        return false;
      }
      size = st.st_size;
      decided = DetectBlobProtoFormat(bytes.get(), static_cast<std::size_t>(st.st_size));
      if (decided == ProtoFormat::kBinary) {
        parsed = parse_binary(bytes.get(), static_cast<int>(size), proto);
      } else {
        google::protobuf::io::ArrayInputStream input(bytes.get(), static_cast<int>(size));
        parsed = parse_text(&input, filename, proto);
      }
    } else {
      // A pipe, FIFO or device (or an empty or huge file): read until the rule decides, then
      // the parser of that format continues with those bytes followed by the rest of the input.
      std::string head;
      BlobProtoFormatSniffer sniffer;
      char chunk[1 << 16];
      // At most a message's size of leading blanks and comments (the head must fit an int).
      while (!sniffer.decided() && head.size() + sizeof chunk <= static_cast<std::size_t>(kMaxMessageBytes)) {
        ssize_t n = ::read(file.fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          read_error = std::string(filename) + ": read failed (" + std::strerror(errno) + ")";
          return false;
        }
        if (n == 0) break;
        head.append(chunk, static_cast<std::size_t>(n));
        sniffer.feed(chunk, static_cast<std::size_t>(n));
      }
      decided = sniffer.format();
      google::protobuf::io::ArrayInputStream first(head.data(), static_cast<int>(head.size()));
      FileInputStream rest(file.fd, 1 << 20);
      google::protobuf::io::ZeroCopyInputStream* parts[] = {&first, &rest};
      google::protobuf::io::ConcatenatingInputStream input(parts, 2);
      parsed = decided == ProtoFormat::kBinary ? parse_stream(&input, proto, &size) : parse_text(&input, filename, proto);
    }
    if (format) *format = decided;
    if (!parsed) {
      if (decided == ProtoFormat::kBinary) read_error = binary_error(filename, *proto);
      read_error += std::string(" [read as ") + to_string(decided) +
                    (decided == ProtoFormat::kText
                         ? ": it starts with a lowercase letter after whitespace and comments"
                         : ": its first byte after whitespace and comments is not a lowercase letter") +
                    "; see BlobProtoFormatSniffer in blobrt/io.hpp]";
      return false;
    }
    // A file of another message parses as a BlobProto of undefined or mistyped fields: refused,
    // never returned as an empty or made-up blob (text format already refuses unknown names).
    if (decided == ProtoFormat::kBinary) return accept_blob_proto(filename, proto, size);
    return true;
  });
}

void ReadBlobProtoFromFileOrDie(const char* filename, BlobProto* proto, ProtoFormat* format) {
  if (!ReadBlobProtoFromFile(filename, proto, format)) throw Error(read_error);
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
  if (auto* blob = dynamic_cast<const BlobProto*>(&proto)) refuse_if_read_as_text(*blob, filename);
  write_atomically(filename, [&](int fd, std::string* step) {
    return serialize_to(fd, step, [&](google::protobuf::io::ZeroCopyOutputStream* out) {
      return proto.SerializeToZeroCopyStream(out);
    });
  });
}

}  // namespace blobrt
