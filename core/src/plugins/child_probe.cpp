#include "child_probe.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blobrt_config.h"
#include "environment.hpp"
#include "log.hpp"

extern char** environ;

namespace blobrt {
namespace {

std::string scanner_path() {
  if (auto path = environment::get("BLOBRT_PLUGIN_SCANNER")) return *path;
  return BLOBRT_SCANNER_PATH;
}

int timeout_seconds() {
  if (auto value = environment::get("BLOBRT_PLUGIN_PROBE_TIMEOUT")) {
    int seconds = std::atoi(value->c_str());
    if (seconds > 0) return seconds;
  }
  return 30;
}

std::string signal_name(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string encode_probe_result(const PluginReport& report) {
  return std::string("usable=") + (report.usable ? "1" : "0") + "\nreason=" + one_line(report.reason) + "\n";
}

bool probe_in_child(PluginReport& report) {
  auto mode = environment::get("BLOBRT_PLUGIN_PROBE");
  if (mode && *mode == "inprocess") return true;
  std::string scanner = scanner_path();
  if (::access(scanner.c_str(), X_OK) != 0) {
    log::debug("no plugin scanner at ", scanner, ": probing ", report.manifest, " in this process");
    return true;
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return true;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string manifest = report.manifest;
  char* argv[] = {scanner.data(), manifest.data(), nullptr};
  pid_t child = -1;
  int spawned = ::posix_spawn(&child, scanner.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    log::debug("cannot start ", scanner, " (", std::strerror(spawned), "): probing in process");
    return true;
  }

  // Read the answer until EOF or the deadline.
  std::string answer;
  const int limit = timeout_seconds();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit);
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{pipe_fds[0], POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    char buffer[4096];
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(child, &status, 0);
  } while (waited < 0 && errno == EINTR);

  if (timed_out) {
    report.reason = "hung while being probed (no answer within " + std::to_string(limit) +
                    " s in a child process; BLOBRT_PLUGIN_PROBE_TIMEOUT sets the limit)";
    return false;
  }
  if (waited == child && WIFSIGNALED(status)) {
    report.reason = "crashed while being probed (" + signal_name(WTERMSIG(status)) + " in a child process)";
    return false;
  }
  auto usable_at = answer.find("usable=");
  auto reason_at = answer.find("\nreason=");
  if (usable_at == std::string::npos || reason_at == std::string::npos) {
    report.reason = WIFEXITED(status) && WEXITSTATUS(status) != 0
                        ? "exited with status " + std::to_string(WEXITSTATUS(status)) +
                              " while being probed (in a child process)"
                        : "the plugin scanner gave no answer (exit status " +
                              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return false;
  }
  if (answer.compare(usable_at + 7, 1, "1") == 0) return true;
  std::string reason = answer.substr(reason_at + 8);
  while (!reason.empty() && reason.back() == '\n') reason.pop_back();
  // Not usable: the same checks in process would say the same, without the risk. A
  // plugin with 0 devices is still loaded, so that its library version is shown.
  if (reason.rfind("0 devices", 0) == 0) return true;
  report.reason = reason;
  return false;
}

}  // namespace blobrt
