// blobrt::Error: what every Caffe CHECK / LOG(FATAL) becomes. The process is never aborted.
#ifndef BLOBRT_ERROR_HPP
#define BLOBRT_ERROR_HPP

#include <sstream>
#include <stdexcept>
#include <string>

namespace blobrt {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// The host or a device could not give the memory asked for (a failed host allocation, a
// plugin's BLOBRT_ERR_OUT_OF_MEMORY): a caller may free caches or retry smaller.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// The device does not offer the operation (a plugin's BLOBRT_ERR_UNSUPPORTED, e.g. double
// precision on a device without fp64).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

namespace detail {
// Builds a message from any streamable parts and throws it as E:
// fail_as<OutOfMemoryError>("cannot allocate ", n, " bytes").
template <typename E, typename... Parts>
[[noreturn]] void fail_as(const Parts&... parts) {
  std::ostringstream stream;
  (stream << ... << parts);
  throw E(stream.str());
}
// fail("axis ", a, " out of range"): a blobrt::Error.
template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  fail_as<Error>(parts...);
}
}  // namespace detail

}  // namespace blobrt

#endif  // BLOBRT_ERROR_HPP
