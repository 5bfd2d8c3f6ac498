#include <utility>

#include "selection.hpp"

namespace blobrt {

namespace {

// The skips that are a plugin's verdict: one state, so one spelling (plugin_status.cpp's).
constexpr std::pair<SkipCode, PluginStatus> kVerdictSkips[] = {
    {SkipCode::kRefused, PluginStatus::kRefused},         {SkipCode::kInvalidManifest, PluginStatus::kInvalidManifest},
    {SkipCode::kReservedName, PluginStatus::kReservedName}, {SkipCode::kShadowed, PluginStatus::kShadowed},
    {SkipCode::kNotLoadable, PluginStatus::kNotLoadable}, {SkipCode::kInitFailed, PluginStatus::kInitFailed},
    {SkipCode::kNoDevice, PluginStatus::kNoDevice},       {SkipCode::kWillNotOpen, PluginStatus::kWillNotOpen},
    {SkipCode::kNoAnswer, PluginStatus::kNoAnswer},
};

}  // namespace

const char* to_string(SkipCode code) noexcept {
  switch (code) {
    case SkipCode::kLoadFailed: return "load_failed";
    case SkipCode::kOpenFailed: return "open_failed";
    case SkipCode::kNoSuchDevice: return "no_such_device";
    case SkipCode::kNotFound: return "not_found";
    case SkipCode::kLowerPriority: return "lower_priority";
    case SkipCode::kBuiltinLast: return "builtin_last";
    case SkipCode::kNotNamed: return "not_named";
    default: break;  // a plugin's verdict
  }
  for (const auto& [skip, status] : kVerdictSkips) {
    if (skip == code) return to_string(status);
  }
  return "unknown";
}

SkipCode skip_code(PluginStatus status) noexcept {
  for (const auto& [skip, verdict] : kVerdictSkips) {
    if (verdict == status) return skip;
  }
  return SkipCode::kNotLoadable;  // kUsable: not asked (a usable plugin is not skipped for its status)
}

std::vector<std::string> selection_lines(const SelectionReport& report) {
  std::vector<std::string> lines;
  if (!report.chosen.empty()) {
    lines.push_back((report.requested == "auto" ? "auto chose " : "selected ") + report.chosen +
                    (report.why.empty() ? "" : " (" + report.why + ")"));
  }
  for (const SelectionSkip& skip : report.skipped) {
    const bool passed_over = skip.code == SkipCode::kLowerPriority || skip.code == SkipCode::kBuiltinLast ||
                             skip.code == SkipCode::kNotNamed;
    lines.push_back(std::string(passed_over ? "not chosen " : "skipped ") +
                    (skip.device.empty() ? skip.backend : skip.device) + ": " + skip.reason);
  }
  return lines;
}

}  // namespace blobrt
