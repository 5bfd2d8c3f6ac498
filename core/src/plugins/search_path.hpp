// Where plugins are looked for, and which files are trusted: BLOBRT_PLUGIN_PATH, then
// BLOBRT_PLUGIN_SYSTEM_PATH or (the plugins.d next to a relocated libblobrt, the plugin
// packages' directories beside it, then) the installed plugins.d; a directory, manifest or library
// that another user could have replaced is refused (as sudo and ssh's StrictModes do)
// unless BLOBRT_ALLOW_INSECURE_PLUGINS=1.
#ifndef BLOBRT_SEARCH_PATH_HPP
#define BLOBRT_SEARCH_PATH_HPP

#include <string>
#include <vector>

#include "blobrt/plugin_report.hpp"

namespace blobrt {

// The directories to search, in order, each with whether it exists and why it is refused.
std::vector<SearchDirectory> plugin_search_path();

// The plugin packages' directories (plugin wheels: <libblobrt's directory>/../blobrt_plugins/<name>),
// sorted; none where that directory does not exist.
std::vector<std::string> plugin_package_directories();

// Why PATH must not be trusted ("" if it may): writable by every user, by a group other
// than the caller's, or owned by a user other than root and the caller; or a directory
// above it (as written, and where links lead) owned by another user or writable by others
// without the sticky bit (in a sticky one such as /tmp, the entry below must be ours).
std::string insecure_reason(const std::string& path);
// Whether the user allowed untrusted files (BLOBRT_ALLOW_INSECURE_PLUGINS=1).
bool insecure_allowed();
// The verdict for an untrusted file or directory, with how to allow it.
std::string insecure_refusal(const std::string& why);

}  // namespace blobrt

#endif
