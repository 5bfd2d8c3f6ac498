#include "manifest.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "blobrt/error.hpp"

namespace blobrt {
namespace {

std::string trim(const std::string& s) {
  const char* space = " \t\r";
  auto begin = s.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  auto end = s.find_last_not_of(space);
  return s.substr(begin, end - begin + 1);
}

int parse_int(const std::string& value, int line, const char* key, long min, long max) {
  errno = 0;
  char* end = nullptr;
  long parsed = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || parsed < min || parsed > max) {
    detail::fail("line ", line, ": ", key, " '", value, "' is not an integer in [", min, ", ",
                 max, "]");
  }
  return static_cast<int>(parsed);
}

bool is_safe_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

bool is_valid_backend_name(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Manifest parse_manifest(const std::string& text) {
  Manifest manifest;
  bool has_name = false, has_library = false, has_abi = false;
  std::istringstream lines(text);
  std::string raw;
  int number = 0;
  while (std::getline(lines, raw)) {
    ++number;
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) detail::fail("line ", number, ": expected 'key = value'");
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key == "name") {
      if (!is_valid_backend_name(value)) {
        detail::fail("line ", number, ": name '", value, "' is not [a-z0-9_-]{1,32}");
      }
      manifest.name = value;
      has_name = true;
    } else if (key == "library") {
      if (!is_safe_file_name(value)) {
        detail::fail("line ", number, ": library '", value,
                     "' must be a file name in the manifest's own directory");
      }
      manifest.library = value;
      has_library = true;
    } else if (key == "abi") {
      auto dot = value.find('.');
      if (dot == std::string::npos) detail::fail("line ", number, ": abi '", value, "' is not MAJOR.MINOR");
      manifest.abi_major = parse_int(value.substr(0, dot), number, "abi major", 0, 1 << 20);
      manifest.abi_minor = parse_int(value.substr(dot + 1), number, "abi minor", 0, 1 << 20);
      has_abi = true;
    } else if (key == "priority") {
      manifest.priority = parse_int(value, number, "priority", -100000, 100000);
    } else if (key == "requires") {
      std::istringstream names(value);
      std::string library;
      while (names >> library) {
        if (!is_safe_file_name(library)) {
          detail::fail("line ", number, ": required library '", library, "' must be a file name");
        }
        manifest.requires.push_back(library);
      }
    } else if (key == "fork_safe") {
      if (value != "yes" && value != "no") detail::fail("line ", number, ": fork_safe '", value, "' is not yes or no");
      manifest.fork_safe = value == "yes";
    } else {
      detail::fail("line ", number, ": unknown key '", key, "'");
    }
  }
  if (!has_name) detail::fail("missing 'name'");
  if (!has_library) detail::fail("missing 'library'");
  if (!has_abi) detail::fail("missing 'abi'");
  return manifest;
}

}  // namespace blobrt
