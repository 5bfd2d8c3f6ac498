// blobrt-bench: every benchmark and every reference it is divided by, in one run.
//   blobrt-bench --benchmark_out=results.json --benchmark_out_format=json
//   blobrt-bench --blobrt_smoke          # CI: tiny sizes, seconds, no assertions on time
// tools/bench_report.py turns the JSON into the ratio table and the plot.
#include <cstring>
#include <vector>

#include "bench_common.hpp"

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--blobrt_smoke") == 0) {
      blobrt::bench::set_smoke(true);
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
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
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
