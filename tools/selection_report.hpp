// The selection of `blobrt info --json` / blobrt.info() in structure: the device chosen
// and why, and each backend not chosen with a reason code and the reason text, from the
// runtime's selection log (blobrt::selection_log(), whose lines core/src/runtime.cpp writes).
#ifndef BLOBRT_TOOLS_SELECTION_REPORT_HPP
#define BLOBRT_TOOLS_SELECTION_REPORT_HPP

#include <string>
#include <vector>

#include "json_out.hpp"

namespace blobrt::tools {

// {"chosen": {"device", "reason"} or null, "skipped": [{"backend", "code", "reason"}],
//  "error": text or null, "log": the log lines themselves}. Codes: "unusable" (the loader refused the plugin),
// "open_failed" (usable when probed, would not open now), "lower_priority" (a usable one
// that auto ranked below the chosen), "builtin_last" (the host device, last in auto's
// order), "other" (a log line of another form; its whole text is the reason).
json selection_report(const std::vector<std::string>& log, const std::string& error);

}  // namespace blobrt::tools

#endif
