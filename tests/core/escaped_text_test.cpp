// blobrt/escaped_text.hpp: what an error message quotes of a plugin manifest's value
// (ASCII) or a model file's layer name (UTF-8 kept). Guards against a NUL cutting a reason
// short, an escape sequence reaching a terminal, a corrupt name failing Python's decoding,
// and a backslash in the text being mistaken for an escape.
#include <gtest/gtest.h>

#include <string>

#include "blobrt/escaped_text.hpp"

using blobrt::detail::escaped_text;

TEST(EscapedText, PrintableAsciiIsKept) {
  EXPECT_EQ(escaped_text("conv1 weights-2_a.b", false), "conv1 weights-2_a.b");
  EXPECT_EQ(escaped_text("conv1 weights-2_a.b", true), "conv1 weights-2_a.b");
  EXPECT_EQ(escaped_text("", true), "");
}

TEST(EscapedText, ControlBytesAndBackslashesAreEscapedInBothModes) {
  const std::string text("a\0b\x1b[2J\\c\x7f\n", 11);
  for (bool keep_utf8 : {false, true}) {
    EXPECT_EQ(escaped_text(text, keep_utf8), "a\\x00b\\x1b[2J\\x5cc\\x7f\\x0a") << keep_utf8;
  }
}

TEST(EscapedText, Utf8IsKeptOnlyWhereAsked) {
  const std::string name = "caf\xc3\xa9 \xe6\xb7\xb1\xe5\xba\xa6 \xf0\x9f\x98\x80";  // café 深度 😀
  EXPECT_EQ(escaped_text(name, true), name);
  EXPECT_EQ(escaped_text("caf\xc3\xa9", false), "caf\\xc3\\xa9");
}

TEST(EscapedText, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(escaped_text("w\xfe", true), "w\\xfe");                // never valid
  EXPECT_EQ(escaped_text("\xc0\x80", true), "\\xc0\\x80");         // overlong NUL
  EXPECT_EQ(escaped_text("x\xe6\xb7", true), "x\\xe6\\xb7");       // cut short at the end
  EXPECT_EQ(escaped_text("\xe6" "a\xb7", true), "\\xe6a\\xb7");    // a continuation missing
  EXPECT_EQ(escaped_text("\x80" "ok", true), "\\x80ok");           // a continuation alone
}
