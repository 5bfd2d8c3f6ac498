#include "info_text.hpp"

#include <sstream>

#include "blobrt/environment.hpp"
#include "dist_info.hpp"

namespace blobrt::tools {
namespace {

std::string text(const json& v) { return v.is_null() ? std::string() : v.get<std::string>(); }

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::ostringstream s;
  s.precision(unit ? 1 : 0);
  s << std::fixed << value << " " << units[unit];
  return s.str();
}

void device_text(std::ostringstream& s, const json& d) {
  const std::string model = d["memory_model"];
  s << "    device " << d["index"].get<int>() << ": " << text(d["name"]) << "\n"
    << "      type " << text(d["type"]) << ", memory " << human_bytes(d["memory_bytes"].get<std::uint64_t>())
    << (model == "shared" ? " (host memory, zero-copy)" : "")
    << (model == "aliased" ? " (buffers in host memory: mirrors without copies)" : "")
    << (d["supports_fp64"].get<bool>() ? ", fp64" : ", no fp64")
    << (d["has_pinned_host"].get<bool>() ? ", pinned host memory" : "") << "\n";
  s << "      native " << (d["native_type"].is_null() ? "unknown" : text(d["native_type"]))
    << (d["addressable_handles"].get<bool>() ? ", handles are addresses" : ", opaque handles")
    << (d["view_alignment"].get<std::uint64_t>() ? ", views at " + std::to_string(d["view_alignment"].get<std::uint64_t>()) + " B" : ", no views")
    << "\n";
  if (!d["details"].is_null()) s << "      " << text(d["details"]) << "\n";
}

}  // namespace

std::string info_text(const json& r) {
  std::ostringstream s;
  s << "blobrt " << text(r["version"]) << " (plugin ABI " << text(r["abi"]) << ")\n";
  // Which copy is in use, where several are installed (a system one, a wheel's).
  s << "libblobrt " << text(r["library"]) << "\n\nPlugin search path:\n";
  if (r["environment_ignored"].get<bool>()) {
    s << "  (environment variables ignored: setuid/setgid process; plugin code sees only the\n"
         "   locale, TERM, USER, LOGNAME and PATH="
      << environment::kScrubbedPath << ")\n";
  }
  for (const json& d : r["search_path"]) {
    s << "  " << text(d["path"]) << "  [" << text(d["origin"]) << (d["exists"].get<bool>() ? "" : ", does not exist")
      << (d["refused"].is_null() ? "" : ", " + text(d["refused"])) << "]\n";
  }
  s << "\nBackends:\n";
  for (const json& p : r["plugins"]) {
    if (p["builtin"].get<bool>()) {
      s << "  " << text(p["name"]) << "  (built-in)  usable\n";
    } else {
      s << "  " << (p["name"].is_null() ? "?" : text(p["name"])) << "  " << text(p["manifest"]) << "\n"
        << "    library " << text(p["library"]) << ", ABI " << text(p["abi"]) << ", priority "
        << p["priority"].get<int>();
      if (!p["library_version"].is_null()) s << ", " << text(p["library_version"]);
      s << "\n";
      if (!p["requires"].empty()) {
        s << "    requires";
        // Each with the file really loaded under that name, where the probe loaded one.
        for (std::size_t i = 0; i < p["requires"].size(); ++i) {
          s << " " << text(p["requires"][i]);
          const json found = p.contains("requires_found") && i < p["requires_found"].size()
                                 ? p["requires_found"][i] : json(nullptr);
          if (!found.is_null()) s << " (" << text(found) << ")";
        }
        s << "\n";
      }
      s << "    " << (p["usable"].get<bool>() ? "usable" : "NOT USABLE: " + text(p["reason"])) << "\n";
    }
    for (const json& d : p["devices"]) device_text(s, d);
  }
  s << "\nSelection:\n";
  for (const json& line : r["selection"]["log"]) s << "  " << text(line) << "\n";
  if (!r["active"].is_null()) s << "\nActive device: " << text(r["active"]) << "\n";
  s << dist_text();
  return s.str();
}

std::string info_brief(const json& r) {
  std::ostringstream s;
  const std::string active = text(r["active"]);
  for (const json& p : r["plugins"]) {
    if (!p["usable"].get<bool>()) {
      s << "-  " << (p["name"].is_null() ? text(p["manifest"]) : text(p["name"])) << "  not usable: "
        << text(p["reason"]).substr(0, text(p["reason"]).find('\n')) << "\n";
      continue;
    }
    for (const json& d : p["devices"]) {
      const std::string id = text(d["id"]);
      s << id << "  " << text(d["type"]) << "  " << text(d["name"]) << (id == active ? "  [active]" : "") << "\n";
    }
  }
  return s.str();
}

}  // namespace blobrt::tools
