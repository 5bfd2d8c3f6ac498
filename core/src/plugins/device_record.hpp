// A DeviceDescription as one line of tab-separated fields, as the scanner answers it
// (`device=` lines, child_probe.hpp) and the verdict cache keeps it (verdict_cache.hpp):
//   index kind memory_bytes memory_model native_type native_index addressable_handles
//   supports_fp64 has_pinned_host view_alignment name details
// kind is cpu|gpu|accelerator, memory_model shared|aliased|separate, native_type DLPack's
// device type number, the flags 0|1; name and details are the plugin's text on one
// line (one_line(): no tab or line break is left in them). The backend is not in it: it is
// the manifest's name.
#ifndef BLOBRT_DEVICE_RECORD_HPP
#define BLOBRT_DEVICE_RECORD_HPP

#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "blobrt/device.hpp"
#include "plugin_text.hpp"

namespace blobrt {

inline constexpr std::size_t kDeviceRecordFields = 12;

// A device's kind as the record spells it (lower case; to_string(DeviceKind) is for people).
inline const char* record_kind(DeviceKind kind) {
  return kind == DeviceKind::kGpu ? "gpu" : kind == DeviceKind::kAccelerator ? "accelerator" : "cpu";
}

// The one of `values` that `spell` writes as `text`; false if none is.
template <typename E, typename Spell>
bool from_spelling(const std::string& text, std::initializer_list<E> values, Spell spell, E* out) {
  for (E value : values) {
    if (text == spell(value)) {
      *out = value;
      return true;
    }
  }
  return false;
}

inline std::string device_record(const DeviceDescription& d) {
  const char* kind = record_kind(d.kind);
  auto flag = [](bool b) { return b ? "1" : "0"; };
  return std::to_string(d.index) + '\t' + kind + '\t' + std::to_string(d.memory_bytes) + '\t' +
         to_string(d.memory_model) + '\t' + std::to_string(static_cast<int>(d.native_type)) + '\t' +
         std::to_string(d.native_index) + '\t' + flag(d.addressable_handles) + '\t' + flag(d.supports_fp64) + '\t' +
         flag(d.has_pinned_host) + '\t' + std::to_string(d.view_alignment) + '\t' + one_line(d.name) + '\t' +
         one_line(d.details);
}

// Fields [at, at + kDeviceRecordFields) of `f` as a device of `backend`; nullopt if any is
// malformed (a cache entry or an answer that is not what this libblobrt writes).
inline std::optional<DeviceDescription> parse_device_record(const std::vector<std::string>& f, std::size_t at,
                                                            const std::string& backend) {
  if (f.size() < at + kDeviceRecordFields) return std::nullopt;
  auto number = [](const std::string& text, unsigned long long* out) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
    errno = 0;
    *out = std::strtoull(text.c_str(), nullptr, 10);
    return errno == 0;
  };
  auto flag = [](const std::string& text, bool* out) {
    if (text != "0" && text != "1") return false;
    *out = text == "1";
    return true;
  };
  DeviceDescription d;
  d.backend = backend;
  unsigned long long index = 0, memory = 0, native_type = 0, native_index = 0, alignment = 0;
  if (!number(f[at], &index) || index > 1u << 20 || !number(f[at + 2], &memory) || !number(f[at + 4], &native_type) ||
      native_type > 1u << 16 || !number(f[at + 5], &native_index) || native_index > 1u << 20 ||
      !number(f[at + 9], &alignment)) {
    return std::nullopt;
  }
  d.index = static_cast<int>(index);
  d.memory_bytes = memory;
  d.native_type = static_cast<NativeDeviceType>(native_type);
  d.native_index = static_cast<int>(native_index);
  d.view_alignment = static_cast<std::size_t>(alignment);
  // Each spelled as the writer spells it (record_kind, to_string), never a second list.
  if (!from_spelling(f[at + 1], {DeviceKind::kCpu, DeviceKind::kGpu, DeviceKind::kAccelerator}, record_kind, &d.kind) ||
      !from_spelling(f[at + 3], {MemoryModel::kShared, MemoryModel::kAliased, MemoryModel::kSeparate},
                     [](MemoryModel m) { return to_string(m); }, &d.memory_model)) {
    return std::nullopt;
  }
  if (!flag(f[at + 6], &d.addressable_handles) || !flag(f[at + 7], &d.supports_fp64) ||
      !flag(f[at + 8], &d.has_pinned_host)) {
    return std::nullopt;
  }
  d.name = f[at + 10];
  d.details = f[at + 11];
  return d;
}

}  // namespace blobrt

#endif
