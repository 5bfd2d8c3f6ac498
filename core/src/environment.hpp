// Environment variables blobrt reads, all through here: in a setuid/setgid process
// (AT_SECURE) every one of them is ignored, so a privileged program cannot be made to
// load plugins from a directory its caller chose.
#ifndef BLOBRT_ENVIRONMENT_HPP
#define BLOBRT_ENVIRONMENT_HPP

#include <optional>
#include <string>

namespace blobrt::environment {

// The variable's value; nullopt if unset or if the process is running setuid/setgid.
std::optional<std::string> get(const char* name);
// True if the process is setuid/setgid and variables are being ignored.
bool ignored();

}  // namespace blobrt::environment

#endif
