#include "selection_report.hpp"

#include <tuple>
#include <utility>

namespace blobrt::tools {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "ID (why)" or "ID: why" after a prefix: {ID, why}. `paren`: the first form is allowed
// (a chosen device's line); a skipped one's name may be a manifest path holding " (".
std::pair<std::string, std::string> split_subject(const std::string& rest, bool paren_allowed) {
  const std::size_t colon = rest.find(": ");
  const std::size_t paren = paren_allowed ? rest.find(" (") : std::string::npos;
  if (paren != std::string::npos && (colon == std::string::npos || paren < colon)) {
    std::string why = rest.substr(paren + 2);
    if (!why.empty() && why.back() == ')') why.pop_back();
    return {rest.substr(0, paren), why};
  }
  if (colon != std::string::npos) return {rest.substr(0, colon), rest.substr(colon + 2)};
  return {rest, ""};
}

}  // namespace

json selection_report(const std::vector<std::string>& log, const std::string& error) {
  json chosen = nullptr;
  json skipped = json::array();
  for (const std::string& line : log) {
    if (chosen.is_null() && (starts_with(line, "auto chose ") || starts_with(line, "selected "))) {
      auto [device, why] = split_subject(line.substr(line.find(' ', 5) + 1), true);
      chosen = {{"device", device}, {"reason", string_or_null(why)}};
      continue;
    }
    std::string code = "other", backend, reason = line;
    if (starts_with(line, "skipped ")) {
      std::tie(backend, reason) = split_subject(line.substr(8), false);
      const std::string probed = "usable when probed, but ";
      code = starts_with(reason, probed) ? "open_failed" : "unusable";
    } else if (starts_with(line, "not chosen ")) {
      std::tie(backend, reason) = split_subject(line.substr(11), false);
      code = backend == "host" ? "builtin_last" : "lower_priority";
    }
    skipped.push_back({{"backend", string_or_null(backend)}, {"code", code}, {"reason", reason}});
  }
  return {{"chosen", chosen}, {"skipped", skipped}, {"error", string_or_null(error)}, {"log", log}};
}

}  // namespace blobrt::tools
