#include "diagnostics.hpp"

#include <sstream>

namespace blobrt {

const char* to_string(Requester who) noexcept {
  switch (who) {
    case Requester::kEnvironment: return "BLOBRT_BACKEND";
    case Requester::kDefault: return "default";
    case Requester::kSelectBackend: return "select_backend";
    case Requester::kSelectThreadDevice: return "select_thread_device";
    case Requester::kDeviceGuard: return "DeviceGuard";
    case Requester::kOpenDevice: return "device";
    case Requester::kAuto: return "auto";
    case Requester::kHostMath: return "host_math_device";
  }
  return "unknown";
}

BackendSpec parse_spec_for(const std::string& text, Requester who) {
  // The process default's spec is the variable's text even when nothing set it ("auto",
  // which always parses); select_backend's argument is "the backend".
  const char* label = who == Requester::kEnvironment || who == Requester::kDefault ? "BLOBRT_BACKEND"
                      : who == Requester::kSelectBackend                            ? "backend"
                                                                                    : to_string(who);
  return parse_backend_spec(text, label);
}

namespace {

// "searched:" and "found:", the part of the error that is about this machine, not the request.
void describe_inventory(std::ostream& s, const Inventory& inv) {
  s << "searched:";
  if (inv.directories.empty()) s << " (no directories)";
  for (const SearchDirectory& d : inv.directories) {
    s << "\n  " << d.path << " (" << d.origin << (d.exists ? "" : ", does not exist")
      << (d.refused.empty() ? "" : ", " + d.refused) << ")";
  }
  if (inv.environment_ignored) s << "\n  (environment ignored: setuid/setgid process)";
  s << "\nfound:\n  host: built-in, usable (1 device)";
  for (const PluginReport& p : inv.plugins) {
    s << "\n  " << (p.name.empty() ? "?" : p.name) << ": " << p.manifest << ": ";
    if (p.usable) {
      s << "usable (" << p.devices.size() << " device" << (p.devices.size() == 1 ? "" : "s") << ")";
    } else {
      s << p.reason;
    }
  }
}

}  // namespace

void fail_unavailable(const Inventory& inventory, const BackendSpec& spec, Requester who, SkipCode code,
                      const std::string& why) {
  std::ostringstream s;
  s << "backend '" << spec.name << (spec.index >= 0 ? ":" + std::to_string(spec.index) : "")
    << "' requested by " << to_string(who) << " cannot be used: " << why << "\n";
  describe_inventory(s, inventory);
  // A device was tried for these; the others are about the backend as a whole.
  const bool device_tried =
      code == SkipCode::kNoSuchDevice || code == SkipCode::kLoadFailed || code == SkipCode::kOpenFailed;
  const std::string id = spec.name + ":" + std::to_string(spec.index < 0 ? 0 : spec.index);
  throw Unavailable(s.str(), SelectionSkip{spec.name, device_tried ? id : "", code, why});
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string named_by(Requester who) { return std::string("named by ") + to_string(who); }

std::string not_named_reason(Requester who, const std::string& text) {
  return std::string(to_string(who)) + " named " + text;
}

std::string auto_rank(int priority, bool has_accelerator) {
  return "priority " + std::to_string(priority) + (has_accelerator ? ", has an accelerator" : "");
}

std::string auto_lower_priority(int priority) {
  return "lower in the auto order (priority " + std::to_string(priority) + ")";
}

std::string auto_builtin_last() { return "the built-in device comes last in the auto order"; }

SelectionSkip auto_could_not_take(const SelectionSkip& skip) {
  SelectionSkip kept = skip;
  const std::string why = first_line(skip.reason);
  kept.reason = skip.code == SkipCode::kOpenFailed ? "usable when probed, but " + why : why;
  return kept;
}

std::string auto_fell_back(bool had_candidates) {
  return had_candidates ? "no plugin device could be opened" : "no usable plugin found";
}

std::string accelerators_skipped_warning(const std::vector<std::string>& skipped, const DeviceDescription& chosen) {
  std::string list;
  for (const std::string& s : skipped) list += (list.empty() ? "" : "; ") + s;
  const bool one = skipped.size() == 1;
  return std::string("auto skipped ") + (one ? "a plugin that drives" : "plugins that drive") +
         " an accelerator: " + list + "; running on " + chosen.id() + " (" + to_string(chosen.kind) +
         "). BLOBRT_LOG=info shows every choice, BLOBRT_LOG=error hides this";
}

}  // namespace blobrt
