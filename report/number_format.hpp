// Numbers as text that reads back exactly: the shortest decimal that parses to the same
// double (std::to_chars), "inf", "-inf", "nan". 36451.25 prints as 36451.25, not 36451.2.
#ifndef BLOBRT_TOOLS_NUMBER_FORMAT_HPP
#define BLOBRT_TOOLS_NUMBER_FORMAT_HPP

#include <charconv>
#include <string>

namespace blobrt::tools {

inline std::string exact_number(double value) {
  char buffer[64];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, r.ptr);
}

}  // namespace blobrt::tools

#endif
