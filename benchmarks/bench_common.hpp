// Shared by the benchmark files: sizes, smoke mode, naming, and byte accounting.
// Names are "group/subject/op/dtype/n" so tools/bench_report.py can match each result
// with its references (the bandwidth probe, the raw library call) from the same run.
#ifndef BLOBRT_BENCH_COMMON_HPP
#define BLOBRT_BENCH_COMMON_HPP

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace blobrt::bench {

// Set by --blobrt_smoke: a few small sizes, so CI runs every benchmark in seconds.
bool smoke();
void set_smoke(bool on);

// n = 2^0, 2^2, ..., 2^26 (smoke: 2^0 and 2^12).
std::vector<std::int64_t> sizes();

// Bytes an operation must move per call, for n elements of `element` bytes.
enum class Pattern { kFill, kCopy, kSum, kDot, kTriad, kScale };
// Operations are chosen before the timed loop: a string comparison per call would cost
// more than a level-1 call of one element. scal uses alpha = -1 (exact, never decays into
// denormals over millions of iterations); axpy alpha = 0.999.
enum class Level1 { kAxpy, kDot, kAsum, kScal };
std::int64_t bytes_moved(Pattern p, std::int64_t n, std::int64_t element);
const char* to_string(Pattern p);

template <typename T>
const char* dtype_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

std::string name(const std::string& group, const std::string& subject, const std::string& op,
                 const std::string& dtype, std::int64_t n);

// Registers a benchmark timed in wall-clock time: CPU time of the calling thread would
// miss the other OpenMP threads and every asynchronous device.
// Single-element runs (the dispatch-overhead figures: nanoseconds) are repeated five
// times and reported as the median, which a noisy virtual machine needs.
// With repetitions (tools/bench.sh repeats the large sizes) each run also reports "min":
// the fastest repetition, which tools/bench_report.py divides by (as STREAM reports its
// best rate: interference only ever slows a memory-bound loop down).
template <typename Fn>
benchmark::internal::Benchmark* reg(const std::string& name, Fn fn) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->ComputeStatistics(
      "min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  bool single = name.size() > 2 && name.compare(name.size() - 2, 2, "/1") == 0;
  if (single && !smoke()) b->Repetitions(5)->ReportAggregatesOnly(true);
  return b;
}

// gemm's and gemv's shapes (row-major, Caffe's): names gemm_MxNxK and gemv_{N,T}_MxN.
struct GemmShape {
  std::int64_t m, n, k;
  std::string name() const {
    return "gemm_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};
struct GemvShape {
  bool trans;
  std::int64_t m, n;
  std::string name() const {
    return std::string("gemv_") + (trans ? "T_" : "N_") + std::to_string(m) + "x" + std::to_string(n);
  }
};
struct MathSizes {
  std::vector<GemmShape> gemm;
  std::vector<GemvShape> gemv;
  std::vector<std::int64_t> elementwise;
};

// One device's benchmarks at sizes of the caller's choice: register_device, register_blob
// and register_math call them for each device at the CPU sizes, blobrt-bench-cuda for its
// CUDA device at the GPU's.
void register_device_ops(const std::string& id, const std::vector<std::int64_t>& sizes);  // bench_device.cpp
void register_blob_ops(const std::string& id, const std::vector<std::int64_t>& sizes);    // bench_blob.cpp
void register_math_ops(const std::string& id, const MathSizes& sizes);                    // bench_math.cpp

// Registration of each file's benchmarks (called from main once the runtime is up).
void register_probe();
void register_raw();
void register_device();
void register_math();  // bench_math.cpp: gemm, gemv, element-wise
void register_opencl_math();  // bench_opencl_math.cpp, built with the OpenCL plugin
void register_blob();
void register_proto();
void register_team();
void register_caffe_mlp();  // bench_caffe_mlp.cpp: the LeNet MLP step on the compat API

}  // namespace blobrt::bench

#endif
