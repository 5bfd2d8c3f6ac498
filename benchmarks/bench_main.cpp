// blobrt-bench: every benchmark and every reference it is divided by, in one run.
//   blobrt-bench --benchmark_out=results.json --benchmark_out_format=json
//   blobrt-bench --blobrt_smoke          # CI: tiny sizes, seconds, no assertions on time
//   blobrt-bench --help                  # ours, then Google Benchmark's flags
// tools/bench_report.py turns the JSON into the ratio table and the plot.
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "bench_common.hpp"
#include "blobrt/runtime.hpp"

int main(int argc, char** argv) {
  bool smoke = false;
  const blobrt::bench::Driver driver{
      "blobrt-bench", "Every blobrt benchmark and every reference it is divided by (docs/performance.md)",
      blobrt::version(), &smoke};
  std::vector<std::string> args;
  if (const auto exit_code = blobrt::bench::parse_command_line(argc, argv, driver, args)) return *exit_code;
  blobrt::bench::set_smoke(smoke);
  blobrt::bench::register_probe();
#ifndef BLOBRT_BENCH_NO_RAW
  blobrt::bench::register_raw();
#endif
  blobrt::bench::register_device();
  blobrt::bench::register_math();
#ifdef BLOBRT_BENCH_OPENCL
  blobrt::bench::register_opencl_math();
#endif
  blobrt::bench::register_blob();
  blobrt::bench::register_proto();
  blobrt::bench::register_team();
  blobrt::bench::register_caffe_mlp();
  return blobrt::bench::run_registered(argv[0], driver, args, "more where one iteration outlasts it, and setup");
}
