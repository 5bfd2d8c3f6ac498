// libFuzzer: arbitrary BLOBRT_BACKEND values and BLOBRT_PLUGIN_PATH lists.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend_spec.hpp"
#include "blobrt/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    blobrt::BackendSpec spec = blobrt::parse_backend_spec(text, "BLOBRT_BACKEND");
    if (spec.index < -1 || spec.name.empty()) __builtin_trap();
  } catch (const blobrt::Error&) {
  }
  for (const std::string& part : blobrt::split_path_list(text)) {
    if (part.empty() || part.find(':') != std::string::npos) __builtin_trap();
  }
  return 0;
}
