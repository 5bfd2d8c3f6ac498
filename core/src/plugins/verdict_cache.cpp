#include "verdict_cache.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blobrt_config.h"
#include "blobrt/plugin_abi.h"
#include "blobrt/environment.hpp"
#include "log.hpp"
#include "plugin_text.hpp"
#include "search_path.hpp"

namespace blobrt {
namespace {

// The first line; a file from another format, another libblobrt or another plugin ABI is
// ignored (its checks, and so its verdicts, may differ).
const std::string kHeader = std::string("blobrt-plugin-verdicts 2 ") + BLOBRT_VERSION + " abi " +
                            std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) + "." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR);
constexpr std::size_t kMaxFileBytes = 1 << 20;

// "path\tinode\tsize\tmtime_ns", or "" for a file that cannot be identified (then no
// verdict is looked up or kept for it).
std::string identity(const std::string& path) {
  if (path.find_first_of("\t\n") != std::string::npos) return "";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  return path + '\t' + std::to_string(st.st_ino) + '\t' + std::to_string(st.st_size) + '\t' +
         std::to_string(st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
}

std::string key(const std::string& manifest, const std::string& library) {
  std::string m = identity(manifest);
  std::string l = identity(library);
  return m.empty() || l.empty() ? "" : m + '\t' + l;
}

std::string default_path() {
  if (auto cache = environment::get("XDG_CACHE_HOME"); cache && (*cache)[0] == '/') {
    return *cache + "/blobrt/plugin-verdicts";
  }
  if (auto home = environment::get("HOME"); home && (*home)[0] == '/') return *home + "/.cache/blobrt/plugin-verdicts";
  return "";
}

// mkdir -p with mode 0700 for the directories it makes.
bool make_directories(const std::string& directory) {
  for (std::size_t at = 1; at != std::string::npos;) {
    at = directory.find('/', at + 1);
    std::string part = directory.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace

VerdictCache VerdictCache::open() {
  VerdictCache cache;
  if (environment::ignored()) return cache;
  std::string mode = environment::get("BLOBRT_PLUGIN_CACHE").value_or("on");
  if (mode == "off") return cache;
  if (mode != "on" && mode != "refresh") {
    log::info("BLOBRT_PLUGIN_CACHE=", mode, " is not one of on, off, refresh: using on");
  }
  cache.path_ = default_path();
  if (cache.path_.empty() || mode == "refresh") return cache;

  struct stat st {};
  if (::stat(cache.path_.c_str(), &st) != 0) return cache;
  if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kMaxFileBytes) {
    log::info("plugin verdict cache ", cache.path_, " ignored: not a regular file of at most ", kMaxFileBytes,
              " bytes");
    return cache;
  }
  // A verdict decides which plugin code runs in this process, so it is trusted only as far
  // as the plugin files are: another user who could write it (a shared XDG_CACHE_HOME)
  // could keep a backend out, or let a crashing one in.
  if (std::string why = insecure_reason(cache.path_); !why.empty()) {
    log::info("plugin verdict cache ignored and not rewritten: ", why);
    cache.path_.clear();
    return cache;
  }
  std::ifstream in(cache.path_);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return cache;
  while (std::getline(in, line)) {
    // Eight identity fields, then usable, answered, devices, reason.
    std::size_t at = 0;
    for (int field = 0; field < 8 && at != std::string::npos; ++field) at = line.find('\t', at + (field ? 1 : 0));
    if (at == std::string::npos) continue;
    cache.entries_[line.substr(0, at)] = line.substr(at + 1);
  }
  return cache;
}

std::optional<ProbeVerdict> VerdictCache::find(const std::string& manifest, const std::string& library) const {
  std::string k = key(manifest, library);
  auto entry = k.empty() ? entries_.end() : entries_.find(k);
  if (entry == entries_.end()) return std::nullopt;
  // "usable\tanswered\tdevices\treason"
  std::istringstream fields(entry->second);
  std::string usable, answered, devices, reason;
  if (!std::getline(fields, usable, '\t') || !std::getline(fields, answered, '\t') ||
      !std::getline(fields, devices, '\t')) {
    return std::nullopt;
  }
  std::getline(fields, reason);
  if ((usable != "0" && usable != "1") || (answered != "0" && answered != "1")) return std::nullopt;
  ProbeVerdict verdict;
  verdict.usable = usable == "1";
  verdict.answered = answered == "1";
  verdict.devices = std::atoi(devices.c_str());
  verdict.reason = reason;
  return verdict;
}

void VerdictCache::remember(const std::string& manifest, const std::string& library, const ProbeVerdict& verdict) {
  if (path_.empty()) return;
  std::string k = key(manifest, library);
  if (k.empty()) return;
  entries_[k] = std::string(verdict.usable ? "1" : "0") + '\t' + (verdict.answered ? "1" : "0") + '\t' +
                std::to_string(verdict.devices) + '\t' + one_line(verdict.reason);
  changed_ = true;
}

void VerdictCache::save() const {
  if (!changed_ || path_.empty()) return;
  std::string directory = path_.substr(0, path_.rfind('/'));
  if (!make_directories(directory)) {
    log::debug("plugin verdict cache not written: cannot create ", directory, " (", std::strerror(errno), ")");
    return;
  }
  if (std::string why = insecure_reason(directory); !why.empty()) {
    log::info("plugin verdict cache not written: ", why);
    return;
  }
  std::string temporary = path_ + ".XXXXXX";
  int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) {
    log::debug("plugin verdict cache not written: ", temporary, ": ", std::strerror(errno));
    return;
  }
  std::string text = kHeader + '\n';
  for (const auto& [k, fields] : entries_) {
    // Entries of files that are gone or changed are dropped: the file stays small.
    std::size_t manifest_end = k.find('\t');
    std::size_t library_at = manifest_end;
    for (int field = 0; field < 3 && library_at != std::string::npos; ++field) library_at = k.find('\t', library_at + 1);
    if (library_at == std::string::npos) continue;
    std::string library = k.substr(library_at + 1, k.find('\t', library_at + 1) - library_at - 1);
    if (key(k.substr(0, manifest_end), library) != k) continue;
    text += k + '\t' + fields + '\n';
  }
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  written = ::close(fd) == 0 && written;
  // rename() replaces atomically: a concurrent reader sees the old file or the new one.
  if (!written || ::rename(temporary.c_str(), path_.c_str()) != 0) {
    log::debug("plugin verdict cache not written: ", path_, ": ", std::strerror(errno));
    ::unlink(temporary.c_str());
  }
}

}  // namespace blobrt
