// `blobrt info` as text: the full report, or --brief's one line per device (like
// `clinfo -l`). Both print from info_report() (info_report.hpp), as --json does.
#ifndef BLOBRT_TOOLS_INFO_TEXT_HPP
#define BLOBRT_TOOLS_INFO_TEXT_HPP

#include <string>

#include "json_out.hpp"

namespace blobrt::tools {

std::string info_text(const json& report);
// "blis:0  cpu  BLIS 0.9.0 on ...  [active]" for every device of every usable plugin,
// then "-  NAME  not usable: REASON" for each plugin that is not.
std::string info_brief(const json& report);

}  // namespace blobrt::tools

#endif
