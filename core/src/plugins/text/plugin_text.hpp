// Text that a plugin hands across the C boundary, read with a bound: a plugin that leaves a
// field unterminated (or a string pointer dangling past its end) is never read beyond it.
#ifndef BLOBRT_PLUGIN_TEXT_HPP
#define BLOBRT_PLUGIN_TEXT_HPP

#include <cstring>
#include <string>

#include "blobrt/plugin_abi.h"

namespace blobrt {

// Static strings of a plugin's table (name, library_version) are read up to this length.
constexpr std::size_t kMaxPluginString = 256;

inline std::string plugin_text(const char* text, std::size_t capacity) {
  return text ? std::string(text, ::strnlen(text, capacity)) : std::string();
}

inline std::string plugin_message(const blobrt_error& err, const char* fallback) {
  std::string text = plugin_text(err.message, sizeof err.message);
  return text.empty() ? fallback : text;
}

// Plugin text on one line (tabs and line breaks become spaces), for the line-based scanner
// answer and verdict cache.
inline std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

}  // namespace blobrt

#endif
