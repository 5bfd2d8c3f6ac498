// The command line both data-parallel examples share (blobrt-dp-sgd, blobrt-caffe-mlp), on
// CLI11 and parsed before MPI starts: a usage error ends every rank with exit 2 and one
// line naming the option, without MPI_Abort noise.
#ifndef BLOBRT_EXAMPLES_SGD_COMMAND_LINE_HPP
#define BLOBRT_EXAMPLES_SGD_COMMAND_LINE_HPP

#include <CLI/CLI.hpp>

#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include "blobrt/runtime.hpp"  // blobrt::version()

namespace sgd_example {

inline constexpr const char* kExitCodes =
    "Exit codes: 0 trained (rank 0 printed the result); 1 a runtime error on some rank (the job\n"
    "is aborted so that no rank waits in a collective); 2 usage error (before MPI starts).\n";

// A count of at least 1. (CLI::PositiveNumber would print DBL_MAX, all 309 digits, as the
// bound `--steps 0` misses.)
inline CLI::Validator at_least_one() {
  return CLI::Range(1, std::numeric_limits<int>::max()).description("POSITIVE");
}

// --version, the exit codes, and the options every SGD example has.
template <typename Real>
void add_sgd_options(CLI::App& app, int& steps, int& batch, Real& lr, std::string& out, const char* out_help) {
  app.footer(kExitCodes);
  app.set_version_flag("--version", app.get_name() + " " + blobrt::version());
  app.add_option("--steps", steps, "SGD steps")->capture_default_str()->check(at_least_one());
  app.add_option("--batch", batch, "samples per rank per step")->capture_default_str()->check(at_least_one());
  app.add_option("--lr", lr, "learning rate")->capture_default_str();
  app.add_option("--out", out, out_help);
}

// Parses the command line: nullopt to go on, else the status to exit with (0 after --help
// or --version, 2 after a usage error, which is named on stderr).
inline std::optional<int> parse_before_mpi(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string name = app.get_name();
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name.c_str(), e.what(), name.c_str());
    return 2;
  }
  return std::nullopt;
}

}  // namespace sgd_example

#endif
