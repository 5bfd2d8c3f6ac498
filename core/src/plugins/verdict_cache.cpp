#include "verdict_cache.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blobrt_config.h"
#include "blobrt/plugin_abi.h"
#include "blobrt/environment.hpp"
#include "atomic_file.hpp"
#include "device_record.hpp"
#include "log.hpp"
#include "plugin_text.hpp"
#include "search_path.hpp"

namespace blobrt {
namespace {

// The first line; a file from another format, another libblobrt or another plugin ABI is
// ignored (its checks, and so its verdicts, may differ).
const std::string kHeader = std::string("blobrt-plugin-verdicts 6 ") + BLOBRT_VERSION + " abi " +
                            std::to_string(BLOBRT_PLUGIN_ABI_MAJOR) + "." + std::to_string(BLOBRT_PLUGIN_ABI_MINOR);
constexpr std::size_t kMaxFileBytes = 1 << 20;

bool cacheable_path(const std::string& path) { return path.find_first_of("\t\n") == std::string::npos; }

// "device.inode.size.mtime_ns.ctime_ns" of what PATH leads to, "absent" if nothing.
std::string fingerprint(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "absent";
  auto ns = [](const timespec& t) { return std::to_string(t.tv_sec * 1000000000LL + t.tv_nsec); };
  return std::to_string(st.st_dev) + '.' + std::to_string(st.st_ino) + '.' + std::to_string(st.st_size) + '.' +
         ns(st.st_mtim) + '.' + ns(st.st_ctim);
}

// FNV-1a, 64 bits: a short, stable name for the declared dependencies' state.
std::string digest(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

// What the manifest says the verdict depends on, as it is now: each file's identity (a
// directory's entries too, sorted) and each matching variable's value.
std::string dependency_state(const VerdictSubject& subject) {
  std::string state;
  for (const std::string& file : subject.depends_on_files) {
    state += file + '=' + fingerprint(file) + '\n';
    std::error_code ec;
    if (!std::filesystem::is_directory(file, ec)) continue;
    std::vector<std::string> entries;
    for (const auto& entry : std::filesystem::directory_iterator(file, ec)) entries.push_back(entry.path().string());
    std::sort(entries.begin(), entries.end());
    for (const std::string& entry : entries) state += entry + '=' + fingerprint(entry) + '\n';
  }
  std::vector<std::string> variables;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    for (const std::string& pattern : subject.depends_on_env) {
      const bool prefix = !pattern.empty() && pattern.back() == '*';
      if (prefix ? name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0 : name == pattern) {
        variables.push_back(entry);
        break;
      }
    }
  }
  std::sort(variables.begin(), variables.end());
  for (const std::string& v : variables) state += v + '\n';
  return state;
}

// The key of a subject as it is now: its files' identities and its dependencies' digest;
// "" if it cannot be keyed (then no verdict is looked up or kept for it).
std::string key(const VerdictSubject& subject) {
  if (!cacheable_path(subject.manifest) || !cacheable_path(subject.library)) return "";
  const std::string manifest = fingerprint(subject.manifest);
  const std::string library = fingerprint(subject.library);
  if (manifest == "absent" || library == "absent") return "";
  return "m" + manifest + ",l" + library + ",d" + digest(dependency_state(subject));
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t at = 0;
  for (std::size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1) {
    fields.push_back(line.substr(at, tab - at));
  }
  fields.push_back(line.substr(at));
  return fields;
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
    // "manifest\tkey\t..." (the verdict's fields: find() reads them)
    const std::size_t tab = line.find('\t');
    if (tab != std::string::npos && tab > 0) cache.entries_[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return cache;
}

std::optional<ProbeStatus> parse_probe_status(const std::string& text) {
  for (ProbeStatus s : {ProbeStatus::kUsable, ProbeStatus::kNoDevice, ProbeStatus::kWillNotOpen,
                        ProbeStatus::kNotLoadable, ProbeStatus::kInitFailed, ProbeStatus::kNoAnswer}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

std::optional<ProbeVerdict> VerdictCache::find(const VerdictSubject& subject) const {
  auto entry = entries_.find(subject.manifest);
  if (entry == entries_.end()) return std::nullopt;
  // key, status, library version, device count, its devices' fields (device_record.hpp),
  // object count, (object, fingerprint) pairs, reason
  const std::vector<std::string> f = split_tabs(entry->second);
  if (f.size() < 6 || f[0] != key(subject)) return std::nullopt;
  ProbeVerdict verdict;
  const std::optional<ProbeStatus> status = parse_probe_status(f[1]);
  if (!status) return std::nullopt;
  verdict.status = *status;
  verdict.library_version = f[2];
  const std::size_t devices = std::strtoul(f[3].c_str(), nullptr, 10);
  if (devices > (f.size() - 6) / kDeviceRecordFields) return std::nullopt;
  std::size_t at = 4;
  for (std::size_t i = 0; i < devices; ++i, at += kDeviceRecordFields) {
    std::optional<DeviceDescription> device = parse_device_record(f, at, "");
    if (!device) return std::nullopt;
    verdict.devices.push_back(std::move(*device));
  }
  if (f.size() < at + 2) return std::nullopt;
  const std::size_t objects = std::strtoul(f[at].c_str(), nullptr, 10);
  // (A corrupt count must not wrap the size check below.)
  if (objects > (f.size() - at - 2) / 2 || f.size() != at + 2 + 2 * objects) return std::nullopt;
  for (std::size_t i = 0; i < objects; ++i) {
    const std::string& path = f[at + 1 + 2 * i];
    if (fingerprint(path) != f[at + 2 + 2 * i]) {
      log::debug("plugin ", subject.manifest, ": remembered verdict stale: ", path, " changed since the probe");
      return std::nullopt;
    }
    verdict.objects.push_back(path);
  }
  verdict.reason = f.back();
  return verdict;
}

void VerdictCache::remember(const VerdictSubject& subject, const ProbeVerdict& verdict) {
  if (path_.empty()) return;
  std::string k = key(subject);
  if (k.empty()) return;
  std::string fields = k + '\t' + to_string(verdict.status) + '\t' + one_line(verdict.library_version) + '\t' +
                       std::to_string(verdict.devices.size()) + '\t';
  for (const DeviceDescription& device : verdict.devices) fields += device_record(device) + '\t';
  std::string objects;
  std::size_t count = 0;
  for (const std::string& object : verdict.objects) {
    if (!cacheable_path(object)) return;  // cannot be checked later: not remembered
    objects += object + '\t' + fingerprint(object) + '\t';
    ++count;
  }
  entries_[subject.manifest] = fields + std::to_string(count) + '\t' + objects + one_line(verdict.reason);
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
  atomic_file::Replacement file(path_);  // a reader sees the old file or the new one
  if (!file.created()) {
    log::debug("plugin verdict cache not written: no temporary file in ", directory, ": ",
               std::strerror(file.creation_error()));
    return;
  }
  std::string text = kHeader + '\n';
  for (const auto& [manifest, fields] : entries_) {
    // Entries of manifests that are gone are dropped: the file stays small.
    if (fingerprint(manifest) != "absent") text += manifest + '\t' + fields + '\n';
  }
  if (::write(file.fd(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    log::debug("plugin verdict cache not written: ", path_, ": write failed (", std::strerror(errno), ")");
  } else if (atomic_file::Failure failed = file.commit(false)) {
    log::debug("plugin verdict cache not written: ", path_, ": ", failed.step, " failed (",
               std::strerror(failed.error), ")");
  }
}

}  // namespace blobrt
