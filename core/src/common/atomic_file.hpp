// Replacing a file atomically: the new content is written into a temporary file beside the
// target and swapped in, so that readers, and a process killed at any point, see the old
// file or the new one, never a partial one. Used by the BlobProto writers (memory/io.cpp)
// and the plugin verdict cache (plugins/verdict_cache.cpp); each says in its own words what
// failed, from the step and errno a Replacement reports.
#ifndef BLOBRT_ATOMIC_FILE_HPP
#define BLOBRT_ATOMIC_FILE_HPP

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace blobrt::atomic_file {

// A failed step ("close", "rename", ...) and its errno; step is null when nothing failed.
struct Failure {
  const char* step = nullptr;
  int error = 0;
  explicit operator bool() const { return step != nullptr; }
};

// The temporary file that becomes `target` (a path whose links the caller has followed) at
// commit(); removed when the Replacement goes without a commit.
class Replacement {
 public:
  // Creates "DIR/.BASE.tmp.XXXXXX" beside the target (0600, close-on-exec); created() says
  // whether that worked, creation_error() why not.
  explicit Replacement(const std::string& target) : target_(target) {
    const std::size_t slash = target.rfind('/');
    directory_ = slash == std::string::npos ? "." : target.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    // A hidden name short enough for any file name the target itself could have.
    temporary_ = (slash == std::string::npos ? "" : directory_) + "." + base.substr(0, 200) + ".tmp.XXXXXX";
    fd_ = ::mkostemp(temporary_.data(), O_CLOEXEC);
    creation_error_ = fd_ >= 0 ? 0 : errno ? errno : EIO;
  }
  Replacement(const Replacement&) = delete;
  Replacement& operator=(const Replacement&) = delete;
  ~Replacement() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && creation_error_ == 0) ::unlink(temporary_.c_str());
  }

  bool created() const { return creation_error_ == 0; }
  int creation_error() const { return creation_error_; }
  int fd() const { return fd_; }
  const std::string& directory() const { return directory_; }  // "." or ending in '/'

  // Closes the file and puts it in place of the target. durable: fsync the file first and
  // the directory after, with a plain rename(); otherwise renameat2(RENAME_EXCHANGE) and an
  // unlink of the old content, which avoids ext4's flush inside a rename over an existing
  // file (rename() where there is no target yet). On failure the temporary is removed.
  Failure commit(bool durable) {
    if (durable && ::fsync(fd_) != 0) return {"fsync", errno};
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) return {"close", errno};
    const char* temporary = temporary_.c_str();
    if (!durable && ::renameat2(AT_FDCWD, temporary, AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
      ::unlink(temporary);  // now the old content
    } else if (::rename(temporary, target_.c_str()) != 0) {
      return {"rename", errno};
    }
    committed_ = true;
    if (durable) sync_directory();
    return {};
  }

 private:
  void sync_directory() const {
    const int dir = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    ::fsync(dir);
    ::close(dir);
  }

  std::string target_, directory_, temporary_;
  int fd_ = -1;
  int creation_error_ = 0;
  bool committed_ = false;
};

}  // namespace blobrt::atomic_file

#endif
