#include "relocation.hpp"

#include <dlfcn.h>

#include <filesystem>

namespace blobrt {

std::string libblobrt_directory() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&libblobrt_directory), &info) || !info.dli_fname) return "";
  std::error_code ec;
  std::filesystem::path path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? "" : path.parent_path().string();
}

std::string next_to_libblobrt(const std::string& name) {
  const std::string dir = libblobrt_directory();
  return dir.empty() ? "" : dir + "/blobrt/" + name;
}

}  // namespace blobrt
