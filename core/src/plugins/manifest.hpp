// Plugin manifests (plugins.d/*.plugin): read before any plugin code runs.
//
//   # comment
//   name     = blis
//   library  = libblobrt-blis.so          (a file name in the manifest's own directory)
//   abi      = 1.0
//   priority = 200                        (auto selection order; higher wins)
//   requires = libblis.so.4 libfoo.so.1   (shared libraries checked before loading)
//   library_path = ../../nvidia/cu13/lib   (directories searched for `requires` before the
//                                          system's, relative to the manifest's own; a plugin
//                                          wheel names where pip puts the libraries it links,
//                                          which its RUNPATH names too: docs/packaging.md)
//   fork_safe = yes                       (its devices stay usable in a fork()ed child;
//                                          default no: a child gets a clear error)
//   accelerator = yes                     (the plugin exists to drive GPUs/accelerators:
//                                          auto warns when it skips it, usable or not;
//                                          default no)
//   depends_on_files = /etc/OpenCL/vendors (absolute paths; with depends_on_env, what a
//   depends_on_env = OCL_ICD_VENDORS POCL_*  remembered probe verdict depends on besides
//                                          the plugin's files: verdict_cache.hpp)
#ifndef BLOBRT_MANIFEST_HPP
#define BLOBRT_MANIFEST_HPP

#include <string>
#include <vector>

namespace blobrt {

struct Manifest {
  std::string name;
  std::string library;  // file name, no directory part
  int abi_major = 0;
  int abi_minor = 0;
  int priority = 0;
  std::vector<std::string> required_libraries;  // "requires" in the manifest (a C++20 keyword)
  std::vector<std::string> library_path;  // as written: absolute, or relative to the manifest's directory
  bool fork_safe = false;
  bool accelerator = false;
  std::vector<std::string> depends_on_files;
  std::vector<std::string> depends_on_env;  // names; NAME* matches a prefix
};

// Parses manifest text; throws blobrt::Error "line N: ..." on anything malformed.
Manifest parse_manifest(const std::string& text);

// The manifest's library_path as directories: relative entries resolved against
// MANIFEST_DIR, the manifest's own directory.
std::vector<std::string> library_path_directories(const Manifest& manifest, const std::string& manifest_dir);

// The text of a manifest file: only a regular file (a link to one is fine) of at most
// 64 KiB; a FIFO is opened without blocking and refused, as are devices (/dev/zero) and
// directories. Throws blobrt::Error saying which.
std::string read_manifest_file(const std::string& path);

// A backend name is [a-z0-9_-]{1,32}.
bool is_valid_backend_name(const std::string& name);

}  // namespace blobrt

#endif
