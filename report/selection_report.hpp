// The selection of `blobrt info --json` / blobrt.info(), from the runtime's own record of
// it (blobrt::selection_report(), runtime.hpp): the device chosen and why, each backend or
// device not chosen with its reason code and the reason text, and the same as prose.
#ifndef BLOBRT_TOOLS_SELECTION_REPORT_HPP
#define BLOBRT_TOOLS_SELECTION_REPORT_HPP

#include "blobrt/runtime.hpp"
#include "json_out.hpp"

namespace blobrt::tools {

// {"requested", "origin", "chosen": {"device", "reason"} or null,
//  "skipped": [{"backend", "device" (or null), "code", "reason"}], "error" (or null),
//  "log": the prose lines}. Codes: to_string(SkipCode) (docs/blobrt-info.schema.json).
json selection_json(const SelectionReport& report);

}  // namespace blobrt::tools

#endif
