// core/src/runtime/selection.cpp's skip codes, as `blobrt info --json` and the selection
// report write them: every code has its own spelling, and a skip that is a plugin's verdict
// (no_device, shadowed, ...) is spelled as the verdict itself is (plugin_status.cpp), the one
// spelling of that state. Guards against the two lists drifting apart.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "blobrt/plugin_report.hpp"
#include "blobrt/runtime.hpp"
#include "selection.hpp"

using blobrt::PluginStatus;
using blobrt::SkipCode;

TEST(Selection, EverySkipCodeHasItsOwnSpelling) {
  std::set<std::string> seen;
  for (int c = static_cast<int>(SkipCode::kRefused); c <= static_cast<int>(SkipCode::kNotNamed); ++c) {
    const std::string spelled = blobrt::to_string(static_cast<SkipCode>(c));
    EXPECT_NE(spelled, "unknown") << "code " << c;
    EXPECT_TRUE(seen.insert(spelled).second) << spelled << " spells two codes";
  }
  EXPECT_EQ(seen.size(), 16u);
}

TEST(Selection, AVerdictSkipIsSpelledAsTheVerdict) {
  for (int s = static_cast<int>(PluginStatus::kRefused); s <= static_cast<int>(PluginStatus::kNoAnswer); ++s) {
    const auto status = static_cast<PluginStatus>(s);
    EXPECT_STREQ(blobrt::to_string(blobrt::skip_code(status)), blobrt::to_string(status));
  }
  EXPECT_STREQ(blobrt::to_string(SkipCode::kNoDevice), "no_device");
  EXPECT_STREQ(blobrt::to_string(SkipCode::kBuiltinLast), "builtin_last");
}
