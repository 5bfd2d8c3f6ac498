// What a file that is not a regular one is, in the words of blobrt's messages ("cannot
// write X: it is a FIFO, ...", "invalid manifest: not a regular file (a directory)").
#ifndef BLOBRT_FILE_KIND_HPP
#define BLOBRT_FILE_KIND_HPP

#include <sys/stat.h>

namespace blobrt {

inline const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

}  // namespace blobrt

#endif
