#include "search_path.hpp"

#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include "backend_spec.hpp"
#include "blobrt_config.h"
#include "blobrt/environment.hpp"
#include "relocation.hpp"

namespace blobrt {
namespace fs = std::filesystem;

std::string insecure_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // a missing file is reported elsewhere
  if (st.st_mode & S_IWOTH) return path + " is writable by every user";
  if ((st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != ::getegid()) {
    return path + " is writable by group " + std::to_string(st.st_gid);
  }
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    return path + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  }
  return "";
}

bool insecure_allowed() {
  auto allow = environment::get("BLOBRT_ALLOW_INSECURE_PLUGINS");
  return allow && *allow == "1";
}

std::string insecure_refusal(const std::string& why) {
  return "refused: " + why + " (set BLOBRT_ALLOW_INSECURE_PLUGINS=1 to load it anyway)";
}

std::vector<SearchDirectory> plugin_search_path() {
  std::vector<SearchDirectory> directories;
  auto add = [&](const std::string& path, const char* origin) {
    SearchDirectory d;
    d.path = path;
    d.origin = origin;
    std::error_code ec;
    d.exists = fs::is_directory(path, ec);
    if (d.exists && !insecure_allowed()) {
      std::string why = insecure_reason(path);
      if (!why.empty()) d.refused = insecure_refusal(why);
    }
    directories.push_back(d);
  };
  if (auto user = environment::get("BLOBRT_PLUGIN_PATH")) {
    for (const auto& p : split_path_list(*user)) add(p, "BLOBRT_PLUGIN_PATH");
  }
  if (auto system = environment::get("BLOBRT_PLUGIN_SYSTEM_PATH")) {
    for (const auto& p : split_path_list(*system)) add(p, "BLOBRT_PLUGIN_SYSTEM_PATH");
  } else {
    add(BLOBRT_PLUGINS_DIR, "installed");
    // A relocated install (a Python wheel): the plugins.d beside libblobrt, when that is
    // not the configured one.
    const std::string beside = next_to_libblobrt("plugins.d");
    std::error_code ec;
    if (!beside.empty() && !fs::equivalent(beside, BLOBRT_PLUGINS_DIR, ec) && fs::is_directory(beside, ec)) {
      add(beside, "next to libblobrt");
    }
  }
  return directories;
}

}  // namespace blobrt
