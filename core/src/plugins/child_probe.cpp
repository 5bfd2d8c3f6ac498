#include "child_probe.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blobrt_config.h"
#include "blobrt/environment.hpp"
#include "relocation.hpp"
#include "log.hpp"
#include "plugin_text.hpp"

extern char** environ;

namespace blobrt {
namespace {

// The fd the scanner answers on, and how much of its other output is kept.
constexpr int kAnswerFd = 3;
constexpr std::size_t kOutputTail = 2048;
const std::string kGreeting = "blobrt-plugin-scanner protocol=";

std::string scanner_path() {
  if (auto path = environment::get("BLOBRT_PLUGIN_SCANNER")) return *path;
  // The configured path, or beside libblobrt in a relocated install (relocation.hpp).
  if (::access(BLOBRT_SCANNER_PATH, X_OK) == 0) return BLOBRT_SCANNER_PATH;
  const std::string beside = next_to_libblobrt("blobrt-plugin-scanner");
  return !beside.empty() && ::access(beside.c_str(), X_OK) == 0 ? beside : BLOBRT_SCANNER_PATH;
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

// What one run of the scanner left behind.
struct ScannerRun {
  std::string answer;       // everything written on the answer pipe
  std::string output_tail;  // the last kOutputTail bytes of its stdout and stderr
  bool timed_out = false;
  int status = 0;           // from waitpid
};

// A pipe whose ends are numbered above the standard three and kAnswerFd, so that the
// child's dup2 onto them always clears close-on-exec.
bool make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    int high = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
    ::close(fds[i]);
    fds[i] = high;
  }
  return fds[0] >= 0 && fds[1] >= 0;
}

// Starts the scanner and reads both pipes until they close, then waits for it, all under
// one deadline; past it the child is killed. nullopt if it could not be started.
std::optional<ScannerRun> run_scanner(const std::string& scanner, const std::string& manifest, int limit) {
  int answer_pipe[2] = {-1, -1};
  int output_pipe[2] = {-1, -1};
  if (!make_pipe(answer_pipe) || !make_pipe(output_pipe)) {
    for (int fd : {answer_pipe[0], answer_pipe[1], output_pipe[0], output_pipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, answer_pipe[1], kAnswerFd);
  std::string program = scanner;
  std::string flag = "--answer-fd";
  std::string fd = std::to_string(kAnswerFd);
  std::string path = manifest;
  char* argv[] = {program.data(), flag.data(), fd.data(), path.data(), nullptr};
  // In a setuid/setgid process the scanner (and the plugin it loads) gets the scrubbed
  // environment, whatever this process's own still holds.
  std::vector<std::string> scrubbed;
  std::vector<char*> scrubbed_pointers;
  char** envp = environ;
  if (environment::ignored()) {
    scrubbed = environment::scrubbed(environ);
    for (std::string& entry : scrubbed) scrubbed_pointers.push_back(entry.data());
    scrubbed_pointers.push_back(nullptr);
    envp = scrubbed_pointers.data();
  }
  pid_t child = -1;
  int spawned = ::posix_spawn(&child, scanner.c_str(), &actions, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  ::close(answer_pipe[1]);
  ::close(output_pipe[1]);
  if (spawned != 0) {
    ::close(answer_pipe[0]);
    ::close(output_pipe[0]);
    log::debug("cannot start ", scanner, " (", std::strerror(spawned), ")");
    return std::nullopt;
  }

  ScannerRun run;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit);
  auto ms_until = [](std::chrono::steady_clock::time_point when) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(when - std::chrono::steady_clock::now()).count();
  };
  pollfd fds[2] = {{answer_pipe[0], POLLIN, 0}, {output_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.answer, &run.output_tail};
  // Once the answer pipe is closed the rest of the output gets a short grace period: a
  // process the plugin started may hold the output pipe open long after the scanner ended.
  auto read_until = deadline;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (fds[0].fd < 0 && read_until == deadline) {
      read_until = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
    }
    long long left = ms_until(read_until);
    if (left <= 0) {
      run.timed_out = fds[0].fd >= 0;  // no complete answer pipe by the deadline
      break;
    }
    int ready = ::poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[4096];
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores negative fds
        continue;
      }
      sinks[i]->append(buffer, static_cast<std::size_t>(n));
      if (i == 1 && run.output_tail.size() > kOutputTail) {
        run.output_tail.erase(0, run.output_tail.size() - kOutputTail);
      }
      if (i == 0 && run.answer.size() > 64 * 1024) run.answer.resize(64 * 1024);  // a runaway child
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  // Done reading: the child is exiting. Wait for it under the same deadline.
  for (auto pause = std::chrono::milliseconds(1);;) {
    pid_t waited = ::waitpid(child, &run.status, WNOHANG);
    if (waited == child) return run;
    if (waited < 0 && errno != EINTR) return run;
    if (run.timed_out || ms_until(deadline) <= 0) break;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(20)) pause *= 2;
  }
  run.timed_out = true;
  ::kill(child, SIGKILL);
  while (::waitpid(child, &run.status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

// The child's last words, for a message: its final line(s), at most 300 characters.
std::string last_output(const std::string& tail) {
  std::string text = tail;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return "";
  if (text.size() > 300) text = "..." + text.substr(text.size() - 300);
  return "; its last output: \"" + one_line(text) + "\"";
}

// "key=value" from the answer's lines, or nullopt.
std::optional<std::string> field(const std::string& answer, const std::string& key) {
  std::string wanted = "\n" + key + "=";
  std::size_t at = answer.find(wanted);
  if (at == std::string::npos) return std::nullopt;
  at += wanted.size();
  return answer.substr(at, answer.find('\n', at) - at);
}

bool no_devices(const ProbeVerdict& verdict) { return verdict.answered && verdict.reason.rfind("0 devices", 0) == 0; }

// Whether a remembered verdict still holds. What the plugin's code did (crashed, exited,
// hung) holds for the same files; so do "usable" and "no device" (asked again in process
// when it loads). A plugin that answered but was unusable for another reason (a device
// that would not open, a missing dependency) is probed again: the cause may be outside its
// files and gone by now (a device freed, a library installed, an environment variable).
bool still_holds(const ProbeVerdict& verdict) { return !verdict.answered || verdict.usable || no_devices(verdict); }

// Whether a verdict lets the plugin be loaded here; otherwise sets the reason.
bool admit(const ProbeVerdict& verdict, PluginReport& report, const std::string& remembered_from) {
  // A plugin with no device is still loaded, so that its library version and its own
  // reason (asked again in process: the hardware may have changed) are shown.
  if (verdict.usable || no_devices(verdict)) return true;
  report.reason = verdict.reason;
  if (!remembered_from.empty()) {
    report.reason += " (remembered from an earlier probe in " + remembered_from +
                     "; `blobrt info --rescan` or BLOBRT_PLUGIN_CACHE=refresh probes again)";
  }
  return false;
}

}  // namespace

std::string encode_probe_result(const PluginReport& report, const std::vector<std::string>& objects) {
  std::string answer = kGreeting + std::to_string(kScannerProtocol) + "\nusable=" + (report.usable ? "1" : "0") +
                       "\ndevices=" + std::to_string(report.devices.size()) + "\nreason=" + one_line(report.reason);
  for (const std::string& object : objects) {
    if (object.find('\n') == std::string::npos) answer += "\nobject=" + object;
  }
  return answer + "\nend\n";
}

bool probe_in_child(PluginReport& report, const Manifest& manifest, VerdictCache& cache) {
  auto mode = environment::get("BLOBRT_PLUGIN_PROBE");
  if (mode && *mode == "inprocess") return true;
  const VerdictSubject subject{report.manifest, report.library, manifest.depends_on_files, manifest.depends_on_env};
  if (auto cached = cache.find(subject); cached && still_holds(*cached)) {
    log::debug("plugin ", report.manifest, ": verdict from ", cache.path(), ": ",
               cached->usable ? "usable" : cached->reason);
    return admit(*cached, report, cache.path());
  }
  std::string scanner = scanner_path();
  if (::access(scanner.c_str(), X_OK) != 0) {
    log::debug("no plugin scanner at ", scanner, ": probing ", report.manifest, " in this process");
    return true;
  }
  const int limit = timeout_seconds();
  std::optional<ScannerRun> run = run_scanner(scanner, report.manifest, limit);
  if (!run) return true;

  ProbeVerdict verdict;
  const std::string tail = last_output(run->output_tail);
  const std::string greeting = run->answer.substr(0, run->answer.find('\n'));
  const bool answered = greeting.rfind(kGreeting, 0) == 0;
  const bool complete = answered && run->answer.find("\nend\n") != std::string::npos;
  if (answered && greeting != kGreeting + std::to_string(kScannerProtocol)) {
    log::info(scanner, " speaks another protocol (\"", one_line(greeting), "\"; this libblobrt speaks ",
              kScannerProtocol, "): probing ", report.manifest, " in this process");
    return true;
  }
  if (run->timed_out) {
    verdict.reason = "hung while being probed (no answer within " + std::to_string(limit) +
                     " s in a child process; BLOBRT_PLUGIN_PROBE_TIMEOUT sets the limit)" + tail;
  } else if (WIFSIGNALED(run->status)) {
    verdict.reason = "crashed while being probed (" + signal_name(WTERMSIG(run->status)) + " in a child process)" + tail;
  } else if (!complete) {
    int code = WIFEXITED(run->status) ? WEXITSTATUS(run->status) : -1;
    verdict.reason = answered ? "the plugin scanner stopped in the middle of its answer (exit status " +
                                    std::to_string(code) + ")" + tail
                              : "exited with status " + std::to_string(code) +
                                    " while being probed (in a child process)" + tail;
  } else {
    verdict.answered = true;
    verdict.usable = field(run->answer, "usable").value_or("0") == "1";
    verdict.devices = std::atoi(field(run->answer, "devices").value_or("0").c_str());
    verdict.reason = field(run->answer, "reason").value_or("");
    const std::string object_key = "\nobject=";
    for (std::size_t at = run->answer.find(object_key); at != std::string::npos;
         at = run->answer.find(object_key, at + 1)) {
      const std::size_t begin = at + object_key.size();
      verdict.objects.push_back(run->answer.substr(begin, run->answer.find('\n', begin) - begin));
    }
    if (!verdict.usable && verdict.reason.empty()) verdict.reason = "not usable (the plugin scanner gave no reason)";
  }
  cache.remember(subject, verdict);
  return admit(verdict, report, "");
}

}  // namespace blobrt
