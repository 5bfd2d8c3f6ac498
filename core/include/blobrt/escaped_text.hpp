// Text an error message quotes, whatever bytes it holds (a plugin manifest's value, a model
// file's layer name, as libblobrt and the Python binding quote them): each byte that could cut the message short or garble a terminal (a
// NUL, which ends a C string wherever the message is passed on, a control character, an
// escape sequence) and each backslash as \xNN, so the reason always reaches what is wrong
// and any \x in it is an escape. Valid UTF-8 is kept as it is where `keep_utf8`; otherwise
// only printable ASCII is.
#ifndef BLOBRT_ESCAPED_TEXT_HPP
#define BLOBRT_ESCAPED_TEXT_HPP

#include <cstddef>
#include <string>
#include <string_view>

namespace blobrt::detail {

inline std::string escaped_text(std::string_view text, bool keep_utf8) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    // The bytes of the UTF-8 sequence starting here (1 for ASCII), 0 if none can start here.
    std::size_t length = c < 0x80 ? 1 : !keep_utf8 ? 0 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size() && !(length == 2 && c < 0xc2);
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (!valid || (length == 1 && (c < 0x20 || c == 0x7f || c == '\\'))) {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
      ++i;
      continue;
    }
    out.append(text, i, length);
    i += length;
  }
  return out;
}

}  // namespace blobrt::detail

#endif  // BLOBRT_ESCAPED_TEXT_HPP
