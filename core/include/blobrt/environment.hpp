// The one way blobrt reads its environment: libblobrt, every plugin (through the plugin
// kit) and libblobrt-dist alike. In a setuid/setgid process (AT_SECURE: the kernel says the
// caller may be less privileged than the process) every variable reads as unset, so a
// privileged program cannot be made to load a library, change a size or write a file that
// its caller named; the Vulkan loader and the Khronos OpenCL ICD loader do the same with
// glibc's secure_getenv.
// Header-only, C++17, so that a plugin needs nothing from libblobrt to use it.
#ifndef BLOBRT_ENVIRONMENT_HPP
#define BLOBRT_ENVIRONMENT_HPP

#include <cstdlib>
#include <optional>
#include <string>

#include <sys/auxv.h>

namespace blobrt::environment {

// True if the process is setuid/setgid (or otherwise AT_SECURE) and variables are ignored.
inline bool ignored() { return ::getauxval(AT_SECURE) != 0; }

// The variable's value; nullopt if unset or if the process is running setuid/setgid.
inline std::optional<std::string> get(const char* name) {
  const char* value = ::secure_getenv(name);  // NULL under AT_SECURE
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace blobrt::environment

#endif
