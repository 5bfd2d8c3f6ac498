#include "selection_report.hpp"

namespace blobrt::tools {

json selection_json(const SelectionReport& report) {
  json chosen = nullptr;
  if (!report.chosen.empty()) chosen = {{"device", report.chosen}, {"reason", string_or_null(report.why)}};
  json skipped = json::array();
  for (const SelectionSkip& skip : report.skipped) {
    skipped.push_back({{"backend", skip.backend},
                       {"device", string_or_null(skip.device)},
                       {"code", to_string(skip.code)},
                       {"reason", skip.reason}});
  }
  // The prose is the report's own rendering, the lines selection_log() gives; none when
  // selection failed (the error says it).
  std::vector<std::string> log;
  if (report.error.empty()) log = selection_log();
  return {{"requested", string_or_null(report.requested)},
          {"origin", string_or_null(report.origin)},
          {"chosen", chosen},
          {"skipped", skipped},
          {"error", string_or_null(report.error)},
          {"log", log}};
}

}  // namespace blobrt::tools
