#include "log.hpp"

#include <cstdio>

#include "blobrt/environment.hpp"

namespace blobrt::log {

Level level() {
  static const Level cached = [] {
    auto value = environment::get("BLOBRT_LOG");
    if (!value) return Level::kOff;
    if (*value == "debug") return Level::kDebug;
    if (*value == "info") return Level::kInfo;
    if (!value->empty() && *value != "off") {
      std::fprintf(stderr, "blobrt[warning]: BLOBRT_LOG='%s' is not off|info|debug; logging off\n",
                   value->c_str());
    }
    return Level::kOff;
  }();
  return cached;
}

void write(Level level, const std::string& message) {
  std::fprintf(stderr, "blobrt[%s]: %s\n", level == Level::kDebug ? "debug" : "info",
               message.c_str());
}

}  // namespace blobrt::log
