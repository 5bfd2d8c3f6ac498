// JSON text for the command line and Python (nlohmann/json): always valid UTF-8, whatever
// the paths in it hold (a byte that is not UTF-8 becomes U+FFFD; docs/blobrt-info.schema.json).
#ifndef BLOBRT_TOOLS_JSON_OUT_HPP
#define BLOBRT_TOOLS_JSON_OUT_HPP

#include <nlohmann/json.hpp>
#include <string>

namespace blobrt::tools {

using json = nlohmann::ordered_json;  // keys in the order written

// indent < 0: one line.
inline std::string dump_json(const json& value, int indent = 2) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

// A string, or null when it is empty (an absent value).
inline json string_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace blobrt::tools

#endif
