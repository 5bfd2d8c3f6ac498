#include "backend_spec.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "blobrt/error.hpp"
#include "manifest.hpp"

namespace blobrt {

BackendSpec parse_backend_spec(const std::string& text, const std::string& origin) {
  BackendSpec spec;
  auto colon = text.find(':');
  spec.name = text.substr(0, colon);
  if (spec.name != "auto" && !is_valid_backend_name(spec.name)) {
    detail::fail(origin, "='", text,
                 "' is not a backend name: expected auto, host or NAME[:DEVICE] with NAME in [a-z0-9_-]");
  }
  if (colon != std::string::npos) {
    std::string index = text.substr(colon + 1);
    bool digits = !index.empty() && index.size() <= 7 &&
                  index.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || spec.name == "auto") {
      detail::fail(origin, "='", text, "': the device after ':' must be a non-negative integer",
                   spec.name == "auto" ? " and 'auto' takes none" : "");
    }
    spec.index = std::atoi(index.c_str());
  }
  return spec;
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(list);
  while (std::getline(stream, part, ':')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

}  // namespace blobrt
