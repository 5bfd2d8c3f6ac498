#include "child_probe.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <filesystem>
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
#include "device_record.hpp"
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
  // The one beside libblobrt in a relocated install (a wheel: relocation.hpp) first, as its
  // plugins come first (search_path.cpp): the configured path may hold a system install's
  // scanner, linked with another libblobrt. Else the configured one.
  const std::string beside = next_to_libblobrt("blobrt-plugin-scanner");
  if (!beside.empty() && beside != BLOBRT_SCANNER_PATH && ::access(beside.c_str(), X_OK) == 0) return beside;
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

using Clock = std::chrono::steady_clock;

long long ms_until(Clock::time_point when) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count();
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

// The environment the scanner gets: this process's own, or in a setuid/setgid process the
// scrubbed one, whatever this process's own still holds (the plugin runs in the scanner).
class ScannerEnvironment {
 public:
  ScannerEnvironment() {
    if (!environment::ignored()) return;
    entries_ = environment::scrubbed(environ);
    for (std::string& entry : entries_) pointers_.push_back(entry.data());
    pointers_.push_back(nullptr);
  }
  char** envp() { return pointers_.empty() ? environ : pointers_.data(); }

 private:
  std::vector<std::string> entries_;
  std::vector<char*> pointers_;
};

// Starts `scanner --answer-fd 3 MANIFEST` with stdin on /dev/null, stdout and stderr on
// output_fd and kAnswerFd on answer_fd. The child's pid, or -1 (logged) if it did not start.
pid_t spawn_scanner(const std::string& scanner, const std::string& manifest, int answer_fd, int output_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_fd, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, answer_fd, kAnswerFd);
  std::string program = scanner, flag = "--answer-fd", fd = std::to_string(kAnswerFd), path = manifest;
  char* argv[] = {program.data(), flag.data(), fd.data(), path.data(), nullptr};
  ScannerEnvironment environment;
  pid_t child = -1;
  int spawned = ::posix_spawn(&child, scanner.c_str(), &actions, nullptr, argv, environment.envp());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == 0) return child;
  log::debug("cannot start ", scanner, " (", std::strerror(spawned), ")");
  return -1;
}

// One read from a ready pipe into `sink`; false (and the pipe closed, its fd -1, which
// poll ignores) at its end.
bool read_into(pollfd& pipe, std::string& sink) {
  char buffer[4096];
  ssize_t n = ::read(pipe.fd, buffer, sizeof buffer);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    ::close(pipe.fd);
    pipe.fd = -1;
    return false;
  }
  sink.append(buffer, static_cast<std::size_t>(n));
  return true;
}

// Reads the answer and the output pipes until both close or the deadline passes (then
// run.timed_out if the answer pipe was still open), keeping at most 64 KiB of answer and
// the last kOutputTail bytes of output; closes them. Once the answer pipe is closed the
// rest of the output gets a short grace period: a process the plugin started may hold the
// output pipe open long after the scanner ended.
void read_pipes(int answer_fd, int output_fd, Clock::time_point deadline, ScannerRun& run) {
  pollfd fds[2] = {{answer_fd, POLLIN, 0}, {output_fd, POLLIN, 0}};
  std::string* sinks[2] = {&run.answer, &run.output_tail};
  auto read_until = deadline;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (fds[0].fd < 0 && read_until == deadline) {
      read_until = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
    }
    long long left = ms_until(read_until);
    if (left <= 0) {
      run.timed_out = fds[0].fd >= 0;  // no complete answer pipe by the deadline
      break;
    }
    int ready = ::poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) read_into(fds[i], *sinks[i]);
    }
    if (run.output_tail.size() > kOutputTail) run.output_tail.erase(0, run.output_tail.size() - kOutputTail);
    if (run.answer.size() > 64 * 1024) run.answer.resize(64 * 1024);  // a runaway child
  }
  close_all({fds[0].fd, fds[1].fd});
}

// Waits for the child (done writing: it is exiting) under the same deadline; past it, or
// when the pipes already timed out, kills it.
void reap(pid_t child, Clock::time_point deadline, ScannerRun& run) {
  for (auto pause = std::chrono::milliseconds(1);;) {
    pid_t waited = ::waitpid(child, &run.status, WNOHANG);
    if (waited == child || (waited < 0 && errno != EINTR)) return;
    if (run.timed_out || ms_until(deadline) <= 0) break;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(20)) pause *= 2;
  }
  run.timed_out = true;
  ::kill(child, SIGKILL);
  while (::waitpid(child, &run.status, 0) < 0 && errno == EINTR) {
  }
}

// Starts the scanner and reads both pipes until they close, then waits for it, all under
// one deadline; past it the child is killed. nullopt if it could not be started.
std::optional<ScannerRun> run_scanner(const std::string& scanner, const std::string& manifest, int limit) {
  int answer_pipe[2] = {-1, -1};
  int output_pipe[2] = {-1, -1};
  if (!make_pipe(answer_pipe) || !make_pipe(output_pipe)) {
    close_all({answer_pipe[0], answer_pipe[1], output_pipe[0], output_pipe[1]});
    return std::nullopt;
  }
  const pid_t child = spawn_scanner(scanner, manifest, answer_pipe[1], output_pipe[1]);
  close_all({answer_pipe[1], output_pipe[1]});  // the child's ends: the pipes close when it ends
  if (child < 0) {
    close_all({answer_pipe[0], output_pipe[0]});
    return std::nullopt;
  }
  ScannerRun run;
  const auto deadline = Clock::now() + std::chrono::seconds(limit);
  read_pipes(answer_pipe[0], output_pipe[0], deadline, run);
  reap(child, deadline, run);
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

// Whether a remembered verdict still holds. What the plugin's code did (crashed, exited,
// hung) holds for the same files; so do "usable" and "no device". A plugin that answered
// but was unusable for another reason (a device that would not open, a missing
// dependency) is probed again: the cause may be outside its files and gone by now (a
// device freed, a library installed, an environment variable).
bool still_holds(const ProbeVerdict& verdict) {
  return verdict.status == ProbeStatus::kNoAnswer || verdict.status == ProbeStatus::kUsable ||
         verdict.status == ProbeStatus::kNoDevice;
}

}  // namespace

std::string encode_probe_result(const ProbeVerdict& verdict) {
  std::string answer = kGreeting + std::to_string(kScannerProtocol) + "\nstatus=" + to_string(verdict.status) +
                       "\nlibrary_version=" + one_line(verdict.library_version) +
                       "\nreason=" + one_line(verdict.reason);
  for (const DeviceDescription& device : verdict.devices) answer += "\ndevice=" + device_record(device);
  for (const std::string& object : verdict.objects) {
    if (object.find('\n') == std::string::npos) answer += "\nobject=" + object;
  }
  return answer + "\nend\n";
}

std::optional<ProbeVerdict> decode_probe_result(const std::string& answer) {
  ProbeVerdict verdict;
  bool has_status = false;
  std::size_t at = answer.find('\n');
  while (at != std::string::npos && at + 1 < answer.size()) {
    const std::size_t begin = at + 1;
    at = answer.find('\n', begin);
    const std::string line = answer.substr(begin, at == std::string::npos ? std::string::npos : at - begin);
    const std::size_t equals = line.find('=');
    const std::string key = line.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : line.substr(equals + 1);
    if (key == "status") {
      std::optional<ProbeStatus> status = parse_probe_status(value);
      if (!status || *status == ProbeStatus::kNoAnswer) return std::nullopt;
      verdict.status = *status;
      has_status = true;
    } else if (key == "library_version") {
      verdict.library_version = value;
    } else if (key == "reason") {
      verdict.reason = value;
    } else if (key == "device") {
      std::vector<std::string> fields;
      std::size_t from = 0;
      for (std::size_t tab; (tab = value.find('\t', from)) != std::string::npos; from = tab + 1) {
        fields.push_back(value.substr(from, tab - from));
      }
      fields.push_back(value.substr(from));
      std::optional<DeviceDescription> device = parse_device_record(fields, 0, "");
      if (!device || fields.size() != kDeviceRecordFields) return std::nullopt;
      verdict.devices.push_back(std::move(*device));
    } else if (key == "object") {
      verdict.objects.push_back(value);
    }
  }
  if (!has_status) return std::nullopt;
  return verdict;
}

std::optional<ChildVerdict> probe_in_child(const PluginReport& report, const Manifest& manifest,
                                           VerdictCache& cache) {
  auto mode = environment::get("BLOBRT_PLUGIN_PROBE");
  if (mode && *mode == "inprocess") return std::nullopt;
  // A library_path directory is a dependency too: pip installing NVIDIA's runtime there
  // changes which file the plugin loads, so the remembered verdict no longer holds.
  std::vector<std::string> depends_on_files = manifest.depends_on_files;
  for (const std::string& directory :
       library_path_directories(manifest, std::filesystem::path(report.library).parent_path().string())) {
    depends_on_files.push_back(directory);
  }
  const VerdictSubject subject{report.manifest, report.library, depends_on_files, manifest.depends_on_env};
  if (auto cached = cache.find(subject); cached && still_holds(*cached)) {
    log::debug("plugin ", report.manifest, ": verdict from ", cache.path(), ": ", to_string(cached->status),
               cached->reason.empty() ? "" : ", " + cached->reason);
    return ChildVerdict{std::move(*cached), cache.path()};
  }
  std::string scanner = scanner_path();
  if (::access(scanner.c_str(), X_OK) != 0) {
    log::debug("no plugin scanner at ", scanner, ": probing ", report.manifest, " in this process");
    return std::nullopt;
  }
  const int limit = timeout_seconds();
  std::optional<ScannerRun> run = run_scanner(scanner, report.manifest, limit);
  if (!run) return std::nullopt;

  ProbeVerdict verdict;
  const std::string tail = last_output(run->output_tail);
  const std::string greeting = run->answer.substr(0, run->answer.find('\n'));
  const bool answered = greeting.rfind(kGreeting, 0) == 0;
  const bool complete = answered && run->answer.find("\nend\n") != std::string::npos;
  if (answered && greeting != kGreeting + std::to_string(kScannerProtocol)) {
    log::info(scanner, " speaks another protocol (\"", one_line(greeting), "\"; this libblobrt speaks ",
              kScannerProtocol, "): probing ", report.manifest, " in this process");
    return std::nullopt;
  }
  std::optional<ProbeVerdict> decoded;
  if (complete) decoded = decode_probe_result(run->answer.substr(0, run->answer.find("\nend\n") + 1));
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
  } else if (!decoded) {
    verdict.reason = "the plugin scanner's answer is malformed (a status or device line this libblobrt cannot read)";
  } else {
    verdict = std::move(*decoded);
    if (!verdict.usable() && verdict.reason.empty()) verdict.reason = "not usable (the plugin scanner gave no reason)";
  }
  // A malformed answer says nothing the plugin's code did: not remembered.
  if (!complete || decoded) cache.remember(subject, verdict);
  return ChildVerdict{std::move(verdict), ""};
}

}  // namespace blobrt
