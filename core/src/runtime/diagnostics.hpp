// What selection says, and only that: who asked for a backend, the error a backend or
// device that cannot be used throws (every directory searched, every plugin found), and the
// reasons the selection report gives for each device passed over. The rules that decide
// live in device_order.hpp and runtime.cpp; the wording lives here, in one place.
#ifndef BLOBRT_DIAGNOSTICS_HPP
#define BLOBRT_DIAGNOSTICS_HPP

#include <string>
#include <utility>
#include <vector>

#include "backend_spec.hpp"
#include "blobrt/error.hpp"
#include "blobrt/plugin_report.hpp"
#include "blobrt/runtime.hpp"  // SkipCode, SelectionSkip

namespace blobrt {

// Who asked for a device. Its name is what messages and SelectionReport::origin say.
enum class Requester {
  kEnvironment,         // BLOBRT_BACKEND
  kDefault,             // nothing asked: the process default is auto
  kSelectBackend,       // select_backend()
  kSelectThreadDevice,  // select_thread_device()
  kDeviceGuard,         // DeviceGuard
  kOpenDevice,          // open_device()
  kAuto,                // auto, trying its candidates in turn
  kHostMath,            // host_math_device(), trying its candidates in turn
};
const char* to_string(Requester who) noexcept;

// The spec parsed for `who`: a malformed one is a blobrt::Error that calls the text by the
// name the caller wrote it under ("BLOBRT_BACKEND='x:y' ...", "backend='x:y' ..." for
// select_backend's argument).
BackendSpec parse_spec_for(const std::string& text, Requester who);

// A backend or device that cannot be used: the Error callers see, carrying the code and
// the bare reason the selection report keeps.
class Unavailable : public Error {
 public:
  Unavailable(const std::string& message, SelectionSkip skip) : Error(message), skip(std::move(skip)) {}
  SelectionSkip skip;
};

// Throws Unavailable for `spec`, asked for by `who`: "backend 'NAME[:INDEX]' requested by
// WHO cannot be used: WHY", then the directories searched and every plugin found with its
// verdict. The skip names the device when one was tried (no such device, load or open
// failed), else only the backend.
[[noreturn]] void fail_unavailable(const Inventory& inventory, const BackendSpec& spec, Requester who,
                                   SkipCode code, const std::string& why);

// Reasons in the selection report and the `auto:` log lines.
std::string first_line(const std::string& text);
std::string named_by(Requester who);                                 // why a named device was chosen
std::string not_named_reason(Requester who, const std::string& text);     // why the others were not
std::string auto_rank(int priority, bool has_accelerator);          // where an auto candidate ranks
std::string auto_lower_priority(int priority);                      // one ranked below the chosen
std::string auto_builtin_last();                                    // the host, when a plugin device won
// A candidate auto could not take, as the report keeps it: the reason's first line, after
// "usable when probed, but " for a device that no longer opens (a library that will not load
// now says so itself).
SelectionSkip auto_could_not_take(const SelectionSkip& skip);
std::string auto_fell_back(bool had_candidates);                    // why auto took the host

// The one warning auto gives (docs/architecture.md, "Logging"): the accelerator plugins it
// passed over, each "NAME (reason)", and the device it runs on instead.
std::string accelerators_skipped_warning(const std::vector<std::string>& skipped, const DeviceDescription& chosen);

}  // namespace blobrt

#endif
