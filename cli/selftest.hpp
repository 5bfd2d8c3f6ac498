// `blobrt selftest`: the conformance checks on one device, a line per operation, each
// written and flushed as soon as that operation's cases have run.
#ifndef BLOBRT_TOOLS_SELFTEST_HPP
#define BLOBRT_TOOLS_SELFTEST_HPP

#include <ostream>
#include <string>

namespace blobrt::tools {

// backend "" means the active device (BLOBRT_BACKEND / auto). Returns true if all passed.
bool selftest(const std::string& backend, std::ostream& out);

}  // namespace blobrt::tools

#endif
