// The log's level, sinks and line prefix (blobrt/log.hpp).
#include "log.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "blobrt/environment.hpp"

namespace blobrt {
namespace {

constexpr int kUnread = -1;
std::atomic<int> g_level{kUnread};

std::mutex g_handler_mutex;
std::shared_ptr<const LogHandler> g_handler;  // guarded by g_handler_mutex
std::atomic<bool> g_has_handler{false};

void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// BLOBRT_LOG_FILE, opened once for appending (O_APPEND keeps the lines of processes that
// share the file whole); stderr when unset or when it cannot be opened (said once there).
int sink_fd() {
  static const int fd = [] {
    auto path = environment::get("BLOBRT_LOG_FILE");
    if (!path || path->empty()) return STDERR_FILENO;
    int opened = ::open(path->c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (opened < 0) {
      write_all(STDERR_FILENO, log_prefix(LogLevel::kWarn) + "BLOBRT_LOG_FILE=" + *path +
                                   " cannot be opened for appending (" + std::strerror(errno) +
                                   "); logging to stderr\n");
      return STDERR_FILENO;
    }
    return opened;
  }();
  return fd;
}

const std::string& host_name() {
  static const std::string name = [] {
    char buffer[256] = {};
    if (::gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return std::string("unknown-host");
    return std::string(buffer);
  }();
  return name;
}

// The MPI rank the launcher gave this process (Open MPI, MPICH/Intel MPI's PMI, srun), "" if none.
const std::string& rank() {
  static const std::string value = [] {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
      auto v = environment::get(name);
      if (!v || v->empty() || v->size() > 9) continue;
      bool digits = true;
      for (char c : *v) digits = digits && std::isdigit(static_cast<unsigned char>(c));
      if (digits) return *v;
    }
    return std::string();
  }();
  return value;
}

void write_default(LogLevel level, const std::string& message) {
  write_all(sink_fd(), log_prefix(level) + message + "\n");
}

}  // namespace

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kOff: return "off";
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "?";
}

std::optional<LogLevel> parse_log_level(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "off" || lower == "none" || lower == "0") return LogLevel::kOff;
  if (lower == "error") return LogLevel::kError;
  if (lower == "warn" || lower == "warning") return LogLevel::kWarn;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

LogLevel log_level() {
  int current = g_level.load(std::memory_order_relaxed);
  if (current != kUnread) return static_cast<LogLevel>(current);
  static std::once_flag read;
  std::call_once(read, [] {
    auto value = environment::get("BLOBRT_LOG");
    std::optional<LogLevel> parsed = value ? parse_log_level(*value) : LogLevel::kWarn;
    int unread = kUnread;
    // set_log_level, if it came first, wins.
    g_level.compare_exchange_strong(unread, static_cast<int>(parsed.value_or(LogLevel::kWarn)));
    if (!parsed && !value->empty() && log_enabled(LogLevel::kWarn)) {
      log_write(LogLevel::kWarn, "BLOBRT_LOG='" + *value + "' is not off, error, warn, info or debug; using warn");
    }
  });
  return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed));
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

void set_log_handler(LogHandler handler) {
  std::shared_ptr<const LogHandler> next;
  if (handler) next = std::make_shared<const LogHandler>(std::move(handler));
  std::lock_guard<std::mutex> lock(g_handler_mutex);
  g_handler = std::move(next);
  g_has_handler.store(g_handler != nullptr, std::memory_order_release);
}

std::string log_prefix(LogLevel level) {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  struct tm utc {};
  ::gmtime_r(&now.tv_sec, &utc);
  char time_text[40];
  std::size_t n = std::strftime(time_text, sizeof time_text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(time_text + n, sizeof time_text - n, ".%03ldZ", now.tv_nsec / 1000000L);
  std::string prefix = "blobrt ";
  prefix += time_text;
  prefix += " " + host_name() + " pid " + std::to_string(::getpid()) + " ";
  if (!rank().empty()) prefix += "rank " + rank() + " ";
  prefix += "[";
  prefix += to_string(level);
  prefix += "]: ";
  return prefix;
}

void log_write(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  if (g_has_handler.load(std::memory_order_acquire)) {
    std::shared_ptr<const LogHandler> handler;
    {
      std::lock_guard<std::mutex> lock(g_handler_mutex);
      handler = g_handler;
    }
    if (handler) {
      try {
        (*handler)(level, message);
      } catch (...) {
      }
      return;
    }
  }
  write_default(level, message);
}

}  // namespace blobrt
