// BLOBRT_LOG=info|debug: what the loader found and why the backend was chosen, on stderr.
#ifndef BLOBRT_LOG_HPP
#define BLOBRT_LOG_HPP

#include <sstream>
#include <string>

namespace blobrt::log {

enum class Level { kOff = 0, kInfo = 1, kDebug = 2 };

Level level();
void write(Level level, const std::string& message);

template <typename... Parts>
void info(const Parts&... parts) {
  if (level() < Level::kInfo) return;
  std::ostringstream s;
  (s << ... << parts);
  write(Level::kInfo, s.str());
}

template <typename... Parts>
void debug(const Parts&... parts) {
  if (level() < Level::kDebug) return;
  std::ostringstream s;
  (s << ... << parts);
  write(Level::kDebug, s.str());
}

}  // namespace blobrt::log

#endif
