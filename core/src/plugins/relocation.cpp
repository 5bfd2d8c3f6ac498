#include "relocation.hpp"

#include <dlfcn.h>

#include <filesystem>

namespace blobrt {

std::string libblobrt_loaded_file() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&libblobrt_loaded_file), &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

std::string libblobrt_directory() {
  const std::string file = libblobrt_loaded_file();
  if (file.empty()) return "";
  std::error_code ec;
  std::filesystem::path path = std::filesystem::canonical(file, ec);
  return ec ? "" : path.parent_path().string();
}

std::string next_to_libblobrt(const std::string& name) {
  const std::string dir = libblobrt_directory();
  return dir.empty() ? "" : dir + "/blobrt/" + name;
}

}  // namespace blobrt
