// libblobrt's own shorthand for the public log API (blobrt/log.hpp): log::warn(...),
// info(...), debug(...), error(...), each a no-op below the level in force. Kept out of the
// public header: a namespace named `log` there would hide ::log from code that says
// `using namespace blobrt`.
#ifndef BLOBRT_LOG_HPP
#define BLOBRT_LOG_HPP

#include "blobrt/log.hpp"

namespace blobrt::log {

inline bool enabled(LogLevel level) { return log_enabled(level); }

template <typename... Parts>
void error(const Parts&... parts) { log_message(LogLevel::kError, parts...); }
template <typename... Parts>
void warn(const Parts&... parts) { log_message(LogLevel::kWarn, parts...); }
template <typename... Parts>
void info(const Parts&... parts) { log_message(LogLevel::kInfo, parts...); }
template <typename... Parts>
void debug(const Parts&... parts) { log_message(LogLevel::kDebug, parts...); }

}  // namespace blobrt::log

#endif
