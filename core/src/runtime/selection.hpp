// The selection report's pieces (blobrt::SelectionReport, runtime.hpp) that are not the
// selection rules themselves: the code of an unusable plugin, and the report as prose
// (selection_log(), `blobrt info`). device_order.hpp has the rules, runtime.cpp applies them.
#ifndef BLOBRT_SELECTION_HPP
#define BLOBRT_SELECTION_HPP

#include <string>
#include <vector>

#include "blobrt/runtime.hpp"

namespace blobrt {

// The skip code of a plugin the loader found unusable (its status is not kUsable).
SkipCode skip_code(PluginStatus status) noexcept;

// One line for the device chosen ("auto chose blis:0 (priority 200)", "selected opencl:0
// (named by BLOBRT_BACKEND)"), then one per skip ("skipped NAME: reason" when it could not
// be used, "not chosen NAME: reason" when it was passed over).
std::vector<std::string> selection_lines(const SelectionReport& report);

}  // namespace blobrt

#endif
