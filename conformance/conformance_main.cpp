// blobrt-conformance's main: the GoogleTest suite, or with --fleet the fleet-wide run
// under mpirun (conformance_fleet.hpp), when built with libblobrt-dist. Its own options are
// CLI11's; every other argument (--gtest_filter=..., --gtest_list_tests) goes to GoogleTest.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "blobrt/runtime.hpp"

#ifdef BLOBRT_HAVE_DIST
#include "conformance_fleet.hpp"
#endif

namespace {

constexpr const char* kFooter =
    "GoogleTest's own flags are passed on (--gtest_filter=PATTERN, --gtest_list_tests, ...;\n"
    "--gtest_help lists them). --fleet takes --gtest_filter=PATTERN only, selecting the cases\n"
    "GoogleTest mode would.\n\n"
    "Exit codes:\n"
    "  0  every check passed\n"
    "  1  a check failed (--fleet: anywhere in the job, or a rank's jobs would not get the\n"
    "     --expect backend)\n"
    "  2  usage error: a bad option of its own, or --fleet in a build without libblobrt-dist\n";

}  // namespace

int main(int argc, char** argv) {
  // A line as soon as each test (or fleet check) ends, also into a pipe or a log file:
  // the whole suite takes minutes on a slow device.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"blobrt-conformance: every device found checked against the host reference (GoogleTest).",
               "blobrt-conformance"};
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("blobrt-conformance ") + blobrt::version());
  app.allow_extras();
  bool fleet = false, as_json = false;
  std::string expect;
  app.add_flag("--fleet", fleet, "under mpirun: every rank's devices, one table on rank 0 (docs/dist.md)");
  app.add_flag("--json", as_json, "with --fleet: the table as JSON");
  app.add_option("--expect", expect, "with --fleet: BACKEND[:DEVICE] every rank's jobs must get");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "blobrt-conformance: " << e.what() << "\nRun 'blobrt-conformance --help' for usage.\n";
    return 2;
  }
  if (fleet) {
#ifdef BLOBRT_HAVE_DIST
    return blobrt::fleet::run(argc, argv);
#else
    std::cerr << "blobrt-conformance: --fleet needs libblobrt-dist, which this build lacks "
                 "(configure with -Dmpi=enabled and Open MPI installed)\n";
    return 2;
#endif
  }
  if (as_json || !expect.empty()) {
    std::cerr << "blobrt-conformance: --json and --expect go with --fleet\nRun 'blobrt-conformance --help' for usage.\n";
    return 2;
  }
  // GoogleTest sees the program name and what CLI11 left.
  std::vector<std::string> rest = app.remaining();
  std::vector<char*> gtest_argv{argv[0]};
  for (std::string& arg : rest) {
    // GoogleTest ignores flags it does not know: name them here instead.
    if (arg.rfind("--gtest_", 0) != 0) {
      std::cerr << "blobrt-conformance: unknown argument '" << arg << "'\nRun 'blobrt-conformance --help' for usage.\n";
      return 2;
    }
    gtest_argv.push_back(arg.data());
  }
  gtest_argv.push_back(nullptr);
  int gtest_argc = static_cast<int>(gtest_argv.size()) - 1;
  ::testing::InitGoogleTest(&gtest_argc, gtest_argv.data());
  return RUN_ALL_TESTS();
}
