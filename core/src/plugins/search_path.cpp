#include "search_path.hpp"

#include <algorithm>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include "backend_spec.hpp"
#include "blobrt_config.h"
#include "blobrt/environment.hpp"
#include "relocation.hpp"

namespace blobrt {
namespace fs = std::filesystem;

namespace {

bool trusted_owner(uid_t uid) { return uid == 0 || uid == ::geteuid(); }
bool group_writable_by_others(const struct stat& st) {
  return (st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != ::getegid();
}

// Why the entry itself (a file or directory, as stat/lstat saw it) is not to be trusted.
std::string entry_reason(const std::string& path, const struct stat& st) {
  if (st.st_mode & S_IWOTH) return path + " is writable by every user";
  if (group_writable_by_others(st)) return path + " is writable by group " + std::to_string(st.st_gid);
  if (!trusted_owner(st.st_uid)) return path + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  return "";
}

// Why a directory on the way to a trusted entry is not to be trusted: another user could
// rename the entry below it away and put their own in its place. A directory that others
// may write but that has the sticky bit (/tmp) is safe for entries owned by root or the
// caller, since only an entry's owner can rename or remove it there.
std::string ancestor_reason(const std::string& directory, const struct stat& st, const struct stat& child) {
  if (!trusted_owner(st.st_uid)) {
    return "its parent directory " + directory + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  }
  const bool others_write = (st.st_mode & S_IWOTH) || group_writable_by_others(st);
  if (others_write && !((st.st_mode & S_ISVTX) && trusted_owner(child.st_uid))) {
    return "its parent directory " + directory + " is writable by " +
           ((st.st_mode & S_IWOTH) ? std::string("every user") : "group " + std::to_string(st.st_gid)) +
           ((st.st_mode & S_ISVTX) ? " and the entry below it is not ours" : " without the sticky bit");
  }
  return "";
}

// The ancestors' check for one spelling of PATH (absolute), from the entry up to "/":
// each component is looked at without following it (lstat), so a link in the path is
// checked where it lies and its target through the canonical spelling.
std::string ancestors_reason(const fs::path& path) {
  struct stat child {};
  if (::lstat(path.c_str(), &child) != 0) return "";
  for (fs::path at = path.parent_path(); !at.empty(); at = at.parent_path()) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) return "";
    if (S_ISLNK(st.st_mode)) {
      // A link's own mode is always 0777 and says nothing; what it leads to is walked
      // through the canonical spelling, and its own directory by the next step here.
      child = st;
      if (at == at.root_path()) break;
      continue;
    }
    std::string why = ancestor_reason(at.string(), st, child);
    if (!why.empty()) return why;
    if (at == at.root_path()) break;
    child = st;
  }
  return "";
}

}  // namespace

std::vector<std::string> plugin_package_directories() {
  std::vector<std::string> directories;
  const std::string own = libblobrt_directory();
  std::error_code ec;
  // Only a relocated libblobrt (a wheel's) has plugin packages beside it; an installed one
  // (in the configured <libdir>, whose plugins.d is BLOBRT_PLUGINS_DIR) searches nothing more.
  const fs::path configured_libdir = fs::path(BLOBRT_PLUGINS_DIR).parent_path().parent_path();
  if (own.empty() || fs::equivalent(own, configured_libdir, ec)) return directories;
  const fs::path packages = fs::path(own).parent_path() / "blobrt_plugins";
  if (!fs::is_directory(packages, ec)) return directories;
  for (fs::directory_iterator it(packages, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code dir_ec;
    // Not Python's __pycache__, hidden entries or an editor's backups.
    if (name.empty() || name[0] == '.' || name[0] == '_' || name.back() == '~') continue;
    if (it->is_directory(dir_ec)) directories.push_back(it->path().string());
  }
  std::sort(directories.begin(), directories.end());  // the same order on every node
  return directories;
}

std::string insecure_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // a missing file is reported elsewhere
  std::string why = entry_reason(path, st);
  if (!why.empty()) return why;
  // Every directory above it, as ssh's StrictModes walks them: both the path as written
  // (a link in it could be replaced) and where it really leads.
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (!ec && !(why = ancestors_reason(absolute)).empty()) return path + ": " + why;
  const fs::path real = fs::canonical(path, ec);
  if (!ec && real != absolute && !(why = ancestors_reason(real)).empty()) return path + " (" + real.string() + "): " + why;
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
    // A relocated install (a Python wheel, a moved bundle): the plugins.d beside libblobrt,
    // when that is not the configured one. It comes first: those plugins were built with
    // this libblobrt, while the configured path may hold a system install of another
    // version (the first plugin of a name wins).
    const std::string beside = next_to_libblobrt("plugins.d");
    std::error_code ec;
    if (!beside.empty() && !fs::equivalent(beside, BLOBRT_PLUGINS_DIR, ec) && fs::is_directory(beside, ec)) {
      add(beside, "next to libblobrt");
    }
    // Plugin wheels (blobrt-cuda13): each installs its manifest and library into
    // site-packages/blobrt_plugins/<name>/, beside the core wheel's libblobrt directory
    // (site-packages/.blobrt.mesonpy.libs), as JAX's plugins live in jax_plugins/.
    for (const std::string& directory : plugin_package_directories()) add(directory, "plugin package");
    add(BLOBRT_PLUGINS_DIR, "installed");
  }
  return directories;
}

}  // namespace blobrt
