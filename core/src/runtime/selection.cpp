#include "selection.hpp"

namespace blobrt {

const char* to_string(SkipCode code) noexcept {
  switch (code) {
    case SkipCode::kRefused: return "refused";
    case SkipCode::kInvalidManifest: return "invalid_manifest";
    case SkipCode::kReservedName: return "reserved_name";
    case SkipCode::kShadowed: return "shadowed";
    case SkipCode::kNotLoadable: return "not_loadable";
    case SkipCode::kInitFailed: return "init_failed";
    case SkipCode::kNoDevice: return "no_device";
    case SkipCode::kWillNotOpen: return "will_not_open";
    case SkipCode::kNoAnswer: return "no_answer";
    case SkipCode::kLoadFailed: return "load_failed";
    case SkipCode::kOpenFailed: return "open_failed";
    case SkipCode::kNoSuchDevice: return "no_such_device";
    case SkipCode::kNotFound: return "not_found";
    case SkipCode::kLowerPriority: return "lower_priority";
    case SkipCode::kBuiltinLast: return "builtin_last";
    case SkipCode::kNotNamed: return "not_named";
  }
  return "unknown";
}

SkipCode skip_code(PluginStatus status) noexcept {
  switch (status) {
    case PluginStatus::kRefused: return SkipCode::kRefused;
    case PluginStatus::kInvalidManifest: return SkipCode::kInvalidManifest;
    case PluginStatus::kReservedName: return SkipCode::kReservedName;
    case PluginStatus::kShadowed: return SkipCode::kShadowed;
    case PluginStatus::kInitFailed: return SkipCode::kInitFailed;
    case PluginStatus::kNoDevice: return SkipCode::kNoDevice;
    case PluginStatus::kWillNotOpen: return SkipCode::kWillNotOpen;
    case PluginStatus::kNoAnswer: return SkipCode::kNoAnswer;
    case PluginStatus::kNotLoadable:
    case PluginStatus::kUsable:  // not asked: a usable plugin is not skipped for its status
      break;
  }
  return SkipCode::kNotLoadable;
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
