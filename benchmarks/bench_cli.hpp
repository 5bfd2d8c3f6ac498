// The benchmark drivers' command line (blobrt-bench, blobrt-bench-startup, blobrt-bench-dist):
// blobrt's own options on CLI11, Google Benchmark's --benchmark_* flags passed through to
// benchmark::Initialize, and the plan printed on stderr before a run (how many benchmarks
// match the filter, and an estimate of the time) so that stdout keeps only the results.
#ifndef BLOBRT_BENCH_CLI_HPP
#define BLOBRT_BENCH_CLI_HPP

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace blobrt::bench {

struct Driver {
  std::string program;      // blobrt-bench
  std::string description;  // the first line of --help
  std::string version;      // blobrt's
  bool* smoke = nullptr;    // where --blobrt_smoke goes; nullptr: the driver has no smoke mode
  std::string exit_codes = "";  // the driver's own exit codes, said before the common ones
};

inline constexpr const char* kBenchExitCodes =
    "Exit codes: 0 the benchmarks ran (one that fails reports its error in the results and the\n"
    "run goes on); 1 no benchmark matches the filter, or Google Benchmark could not write\n"
    "--benchmark_out; 2 usage error (an unknown option or flag, a missing or bad value), with\n"
    "one line naming it.\n"
    "Google Benchmark's own flags follow; write them --benchmark_NAME=VALUE.\n";

// The value of the last --NAME=VALUE among args (Google Benchmark's own syntax).
inline std::optional<std::string> flag_value(const std::vector<std::string>& args, const std::string& name) {
  std::optional<std::string> value;
  const std::string prefix = name + "=";
  for (const std::string& a : args) {
    if (a.compare(0, prefix.size(), prefix) == 0) value = a.substr(prefix.size());
  }
  return value;
}

// A boolean flag's value as Google Benchmark reads it (its IsTruthyFlagValue): empty (the
// bare flag) is true; one character is true unless it is 0, f, F, n or N; a longer value is
// true unless it is false, no or off in any case.
inline bool truthy(std::string v) {
  if (v.size() == 1) return std::isalnum(static_cast<unsigned char>(v[0])) && std::string("0fFnN").find(v[0]) == std::string::npos;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v != "false" && v != "no" && v != "off";
}

// Whether Google Benchmark will only list the benchmarks: the last --benchmark_list_tests,
// bare or with a value, decides.
inline bool listing_only(const std::vector<std::string>& args) {
  bool listing = false;
  for (const std::string& a : args) {
    if (a == "--benchmark_list_tests") listing = true;
    if (a.compare(0, 23, "--benchmark_list_tests=") == 0) listing = truthy(a.substr(23));
  }
  return listing;
}

namespace detail {

inline bool is_benchmark_flag(const std::string& arg) {
  return arg.compare(0, 12, "--benchmark_") == 0 || arg.compare(0, 4, "--v=") == 0;
}

inline int usage_error(const Driver& d, const std::string& what) {
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", d.program.c_str(), what.c_str(), d.program.c_str());
  return 2;
}

}  // namespace detail

// Parses the command line: blobrt's options into `d`, Google Benchmark's flags into
// benchmark::Initialize. Returns nullopt to go on with the run, else the exit code
// (--help, --version: 0; a usage error: 2). `args` receives the flags passed through.
inline std::optional<int> parse_command_line(int argc, char** argv, const Driver& d, std::vector<std::string>& args) {
  CLI::App app{d.description, d.program};
  app.footer(d.exit_codes + kBenchExitCodes);
  app.set_version_flag("--version", d.program + " " + d.version);
  if (d.smoke) app.add_flag("--blobrt_smoke", *d.smoke, "a few small sizes and runs, for CI: seconds, not figures");
  app.allow_extras();  // Google Benchmark's flags, checked below
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help() << std::flush;
    benchmark::PrintDefaultHelp();
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --version
    return detail::usage_error(d, e.what());
  }
  args = app.remaining();
  for (const std::string& a : args) {
    if (!detail::is_benchmark_flag(a)) {
      return detail::usage_error(d, "unknown option or argument '" + a + "' (Google Benchmark's flags read --benchmark_NAME=VALUE)");
    }
  }
  std::vector<char*> gb_argv{argv[0]};
  for (std::string& a : args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  gb_argv.push_back(nullptr);
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;
  return std::nullopt;
}

// The names of the registered benchmark instances the filter selects (Google Benchmark's
// list mode, which runs nothing), or nullopt when the user asked for the list itself.
// argv0: main's (Google Benchmark keeps the pointer, for the JSON's "executable").
inline std::optional<std::vector<std::string>> matching(char* argv0, const std::vector<std::string>& args) {
  if (listing_only(args)) return std::nullopt;
  // Without --benchmark_out while listing: the file is the run's to open (and to fail to).
  std::string on = "--benchmark_list_tests=true", no_file = "--benchmark_out=";
  std::string off = "--benchmark_list_tests=false", file = no_file + flag_value(args, "--benchmark_out").value_or("");
  char* list_on[] = {argv0, on.data(), no_file.data(), nullptr};
  char* list_off[] = {argv0, off.data(), file.data(), nullptr};
  int n = 3;
  benchmark::Initialize(&n, list_on);
  std::ostringstream out, err;  // err: "failed to match", which the run itself says again
  benchmark::ConsoleReporter lister;
  lister.SetOutputStream(&out);
  lister.SetErrorStream(&err);
  benchmark::RunSpecifiedBenchmarks(&lister);
  n = 3;
  benchmark::Initialize(&n, list_off);  // only these flags change: the others keep the user's values
  std::vector<std::string> names;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

inline std::string human_seconds(double s) {
  char text[64];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%.3g s", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%d min %02d s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(text, sizeof text, "%d h %02d min", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
  }
  return text;
}

// A number in an instance name: Google Benchmark names an instance whose benchmark sets
// its own repetitions, iterations or min time ".../repeats:5", "/iterations:10", "/min_time:0.100".
inline std::optional<double> name_value(const std::string& name, const std::string& key) {
  const std::size_t at = name.find("/" + key + ":");
  if (at == std::string::npos) return std::nullopt;
  return std::atof(name.c_str() + at + key.size() + 2);
}

// Seconds as --benchmark_min_time gives them (Google Benchmark 1.7 reads a number of
// seconds; later versions also "0.5s", and "100x", a number of iterations: nullopt).
inline std::optional<double> min_time_seconds(const std::vector<std::string>& args) {
  const std::string text = flag_value(args, "--benchmark_min_time").value_or("0.5");
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(*end == '\0' || std::string(end) == "s")) return std::nullopt;
  return seconds;
}

// What a driver does when its filter selects nothing: say so (Google Benchmark would
// print its regex error and exit 0) and exit 1.
inline int no_match(const Driver& d, const std::vector<std::string>& args) {
  std::fprintf(stderr, "%s: no benchmark matches the filter '%s' (--benchmark_list_tests=true lists them)\n",
               d.program.c_str(), flag_value(args, "--benchmark_filter").value_or(".").c_str());
  return 1;
}

// The plan line, on stderr: how many benchmarks match, how many runs that is with their
// repetitions, and an estimate of the time of those that run for a minimum time (runs
// x min time; a benchmark with a fixed number of iterations adds an unknown time, said
// in the line). `note` says what else the estimate leaves out.
inline void print_plan(const Driver& d, const std::vector<std::string>& args, const std::vector<std::string>& names,
                       const std::string& note) {
  const int flag_repetitions =
      std::max(1, std::atoi(flag_value(args, "--benchmark_repetitions").value_or("1").c_str()));
  const std::optional<double> flag_min_time = min_time_seconds(args);
  long long runs = 0, fixed_runs = 0;
  double seconds = 0;
  bool known = true;
  for (const std::string& name : names) {
    const int r = std::max(1, static_cast<int>(name_value(name, "repeats").value_or(flag_repetitions)));
    runs += r;
    if (name_value(name, "iterations")) {
      fixed_runs += r;
    } else if (const auto min_time = name_value(name, "min_time") ? name_value(name, "min_time") : flag_min_time) {
      seconds += r * *min_time;
    } else {
      known = false;
    }
  }
  const std::string filter = flag_value(args, "--benchmark_filter").value_or(".");
  std::string line = d.program + ": " + std::to_string(names.size()) + " benchmark" +
                     (names.size() == 1 ? " matches" : "s match") + " the filter '" + filter + "', " +
                     std::to_string(runs) + " run" + (runs == 1 ? "" : "s") + " with repetitions";
  if (known && runs > fixed_runs) {
    line += "; estimated time " + human_seconds(seconds) + " (an estimate: each run lasts about its min time";
    if (fixed_runs > 0) line += "; " + std::to_string(fixed_runs) + " runs of fixed iterations not counted";
    line += note.empty() ? ")" : "; " + note + ")";
  } else if (runs > 0) {
    line += "; no time estimate: " + std::string(known ? "every run has a fixed number of iterations" : "--benchmark_min_time is not in seconds");
    if (!note.empty()) line += " (" + note + ")";
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

// The end of a driver's main once its benchmarks are registered: the plan line (or exit 1
// when the filter selects nothing), the run, Google Benchmark's shutdown; the exit code.
inline int run_registered(char* argv0, const Driver& d, const std::vector<std::string>& args, const std::string& note) {
  if (const auto names = matching(argv0, args)) {
    if (names->empty()) return no_match(d, args);
    print_plan(d, args, *names, note);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace blobrt::bench

#endif
