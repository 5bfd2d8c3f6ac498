#include "manifest.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blobrt/error.hpp"
#include "blobrt/escaped_text.hpp"
#include "file_kind.hpp"

namespace blobrt {
namespace {

// A manifest's value as an error message quotes it: printable ASCII as it is (escaped_text.hpp).
std::string printable(const std::string& value) { return detail::escaped_text(value, /*keep_utf8=*/false); }

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
    detail::fail("line ", line, ": ", key, " '", printable(value), "' is not an integer in [", min, ", ",
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
        detail::fail("line ", number, ": name '", printable(value), "' is not [a-z0-9_-]{1,32}");
      }
      manifest.name = value;
      has_name = true;
    } else if (key == "library") {
      if (!is_safe_file_name(value)) {
        detail::fail("line ", number, ": library '", printable(value),
                     "' must be a file name in the manifest's own directory");
      }
      manifest.library = value;
      has_library = true;
    } else if (key == "abi") {
      auto dot = value.find('.');
      if (dot == std::string::npos) detail::fail("line ", number, ": abi '", printable(value), "' is not MAJOR.MINOR");
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
          detail::fail("line ", number, ": required library '", printable(library), "' must be a file name");
        }
        manifest.required_libraries.push_back(library);
      }
    } else if (key == "library_path") {
      std::istringstream directories(value);
      for (std::string directory; directories >> directory;) manifest.library_path.push_back(directory);
    } else if (key == "depends_on_files") {
      std::istringstream paths(value);
      for (std::string path; paths >> path;) {
        if (path[0] != '/') detail::fail("line ", number, ": depends_on_files '", printable(path), "' is not an absolute path");
        manifest.depends_on_files.push_back(path);
      }
    } else if (key == "depends_on_env") {
      std::istringstream names(value);
      for (std::string name; names >> name;) {
        const std::size_t stem = name.back() == '*' ? name.size() - 1 : name.size();
        bool valid = stem > 0;
        for (std::size_t i = 0; i < stem; ++i) {
          const char c = name[i];
          valid &= (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        }
        if (!valid) detail::fail("line ", number, ": depends_on_env '", printable(name), "' is not a variable name (NAME or NAME*)");
        manifest.depends_on_env.push_back(name);
      }
    } else if (key == "fork_safe") {
      if (value != "yes" && value != "no") detail::fail("line ", number, ": fork_safe '", printable(value), "' is not yes or no");
      manifest.fork_safe = value == "yes";
    } else if (key == "accelerator") {
      if (value != "yes" && value != "no") detail::fail("line ", number, ": accelerator '", printable(value), "' is not yes or no");
      manifest.accelerator = value == "yes";
    } else {
      detail::fail("line ", number, ": unknown key '", printable(key), "'");
    }
  }
  if (!has_name) detail::fail("missing 'name'");
  if (!has_library) detail::fail("missing 'library'");
  if (!has_abi) detail::fail("missing 'abi'");
  return manifest;
}

// A manifest is a few lines; anything larger is not one.
constexpr std::size_t kMaxManifestBytes = 64 * 1024;

// Reads a manifest: only a regular file (a link to one is fine), at most kMaxManifestBytes.
// A FIFO is opened without blocking and refused, as are devices (/dev/zero) and directories.
std::vector<std::string> library_path_directories(const Manifest& manifest, const std::string& manifest_dir) {
  std::vector<std::string> directories;
  for (const std::string& entry : manifest.library_path) {
    const std::filesystem::path path(entry);
    // Joined, not normalised: ".." is resolved by the filesystem, as the dynamic linker
    // resolves the plugin's $ORIGIN/.. RUNPATH, also through a linked directory.
    directories.push_back((path.is_absolute() ? path : std::filesystem::path(manifest_dir) / path).string());
  }
  return directories;
}

std::string read_manifest_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read: " + std::string(std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("cannot read: " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) {
    throw Error(std::string("not a regular file (") + file_kind(st.st_mode) + ")");
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxManifestBytes) {
    throw Error("manifest is " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(kMaxManifestBytes) + " a manifest may have");
  }
  std::string contents(kMaxManifestBytes + 1, '\0');
  std::size_t have = 0;
  while (have < contents.size()) {
    ssize_t n = ::read(fd, contents.data() + have, contents.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("cannot read: " + std::string(std::strerror(errno)));
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > kMaxManifestBytes) throw Error("manifest grew past " + std::to_string(kMaxManifestBytes) + " bytes");
  contents.resize(have);
  return contents;
}

}  // namespace blobrt
