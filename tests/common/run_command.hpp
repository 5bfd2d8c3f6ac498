// Runs a shell command line and collects its output, for suites that start a probe
// program of their own.
#ifndef BLOBRT_TESTS_RUN_COMMAND_HPP
#define BLOBRT_TESTS_RUN_COMMAND_HPP

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace blobrt::testing {

struct CommandResult {
  bool exited_zero = false;  // exited normally with status 0
  int status = -1;           // as waitpid reports it
  std::string output;        // what it wrote on stdout (add 2>&1 for stderr)
};

inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  result.status = ::pclose(pipe);
  result.exited_zero = WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0;
  return result;
}

}  // namespace blobrt::testing

#endif
