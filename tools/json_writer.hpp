// A minimal JSON emitter for `blobrt info --json` (strings escaped per RFC 8259).
#ifndef BLOBRT_TOOLS_JSON_WRITER_HPP
#define BLOBRT_TOOLS_JSON_WRITER_HPP

#include <cstdio>
#include <ostream>
#include <string>

namespace blobrt::tools {

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace blobrt::tools

#endif
