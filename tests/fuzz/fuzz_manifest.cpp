// libFuzzer: arbitrary text as a plugin manifest.
#include <cstddef>
#include <cstdint>
#include <string>

#include "blobrt/error.hpp"
#include "manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    blobrt::Manifest m = blobrt::parse_manifest(std::string(reinterpret_cast<const char*>(data), size));
    // What parses must be safe to use as a path below the manifest's directory.
    if (m.library.find('/') != std::string::npos || m.library == ".." || m.library.empty()) __builtin_trap();
  } catch (const blobrt::Error&) {
  }
  return 0;
}
