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
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sys/auxv.h>
#include <unistd.h>  // environ

namespace blobrt::environment {

// True if the process is setuid/setgid (or otherwise AT_SECURE) and variables are ignored.
inline bool ignored() { return ::getauxval(AT_SECURE) != 0; }

// The variable's value; nullopt if unset or if the process is running setuid/setgid.
inline std::optional<std::string> get(const char* name) {
  const char* value = ::secure_getenv(name);  // NULL under AT_SECURE
  if (!value) return std::nullopt;
  return std::string(value);
}

// What code that blobrt loads (plugins, and the libraries they bring in: an OpenCL ICD
// loader, a GPU runtime, NCCL) may see of the environment in a setuid/setgid process. Such
// libraries read their own variables with plain getenv (ocl-icd's OCL_ICD_VENDORS names a
// library to load, NCCL_NET_PLUGIN too), so they cannot be made to ignore the caller's
// values: the values are removed instead. Kept: the locale and terminal (they name no file
// that glibc does not already guard), the user's name, and a fixed PATH (a library that
// starts a helper by name must not find the caller's).
constexpr const char* kScrubbedPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

inline bool kept_when_scrubbed(const char* entry) {
  static const char* const kept[] = {"LANG=", "LANGUAGE=", "TERM=", "USER=", "LOGNAME="};
  for (const char* prefix : kept) {
    if (std::strncmp(entry, prefix, std::strlen(prefix)) == 0) return true;
  }
  return std::strncmp(entry, "LC_", 3) == 0 && std::strchr(entry, '=') != nullptr;
}

// The entries ("NAME=value") of `env` that survive the scrub, then the fixed PATH.
inline std::vector<std::string> scrubbed(char** env) {
  std::vector<std::string> kept;
  for (char** e = env; e && *e; ++e) {
    if (kept_when_scrubbed(*e)) kept.emplace_back(*e);
  }
  kept.push_back(std::string("PATH=") + kScrubbedPath);
  return kept;
}

// In a setuid/setgid process, reduces this process's own environment to scrubbed(environ)
// before code blobrt loads can read it; elsewhere does nothing. It changes the environment
// of the whole program (as sudo's env_reset does), from the first plugin load on; like any
// setenv, it must not race with other threads reading the environment.
inline void scrub_for_loaded_code() {
  if (!ignored()) return;
  const std::vector<std::string> kept = scrubbed(::environ);
  ::clearenv();
  for (const std::string& entry : kept) {
    const std::size_t eq = entry.find('=');
    ::setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
  }
}

}  // namespace blobrt::environment

#endif
