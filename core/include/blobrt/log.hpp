// blobrt's log: what the loader found, why a backend was chosen or skipped, what
// libblobrt-dist set up. Levels error < warn < info < debug; BLOBRT_LOG (case-insensitive:
// off, error, warn, info, debug) picks the level, warn by default. Each line goes to stderr,
// or appended to BLOBRT_LOG_FILE, as
//   blobrt 2026-11-24T08:15:26.123Z node1 pid 4242 rank 3 [warn]: MESSAGE
// (UTC time to the millisecond, host, pid, and the MPI rank where the launcher set one:
// OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID), or to the program's own logger through
// set_log_handler. Every function here is thread-safe.
#ifndef BLOBRT_LOG_HPP_PUBLIC
#define BLOBRT_LOG_HPP_PUBLIC

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "blobrt's C++ headers need C++17 or later (-std=c++17); plugin_abi.h alone is plain C"
#endif

#include <functional>
#include <optional>
#include <sstream>
#include <string>

namespace blobrt {

enum class LogLevel { kOff = 0, kError = 1, kWarn = 2, kInfo = 3, kDebug = 4 };

// "off", "error", "warn", "info", "debug".
const char* to_string(LogLevel level);
// A BLOBRT_LOG value, case-insensitive ("warning" is warn); nullopt if it is none of them.
std::optional<LogLevel> parse_log_level(const std::string& text);

// The level in force: set_log_level's, else BLOBRT_LOG's (read once), else warn.
LogLevel log_level();
void set_log_level(LogLevel level);

// Receives each message at or above the level in force instead of stderr/BLOBRT_LOG_FILE:
// the message alone, without the prefix (the program's logger adds its own). It may be
// called from any thread, concurrently, and may itself log through blobrt. An empty
// function restores the default. A handler that throws loses that message, nothing else.
using LogHandler = std::function<void(LogLevel level, const std::string& message)>;
void set_log_handler(LogHandler handler);

// The line prefix the default sink writes ("blobrt TIME HOST pid N [rank R ][LEVEL]: ").
std::string log_prefix(LogLevel level);

// Sends one message (if `level` is in force) to the handler or the default sink.
void log_write(LogLevel level, const std::string& message);

inline bool log_enabled(LogLevel level) { return level != LogLevel::kOff && level <= log_level(); }

// log_message(LogLevel::kInfo, "engine ", name, ": ", n, " buckets"): the parts streamed
// into one message, only when the level is in force.
template <typename... Parts>
void log_message(LogLevel level, const Parts&... parts) {
  if (!log_enabled(level)) return;
  std::ostringstream s;
  (s << ... << parts);
  log_write(level, s.str());
}

}  // namespace blobrt

#endif
