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

namespace detail {
// Builds a message from any streamable parts: fail("axis ", a, " out of range").
template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream stream;
  (stream << ... << parts);
  throw Error(stream.str());
}
}  // namespace detail

}  // namespace blobrt

#endif  // BLOBRT_ERROR_HPP
