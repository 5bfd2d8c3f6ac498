// blobrt-bench-busy's workloads (issue 48, "busy cores"): each runs in a worker process of
// its own (bench_busy_worker.cpp), so that one run can time blobrt with its default
// threads and with BLOBRT_NUM_THREADS=1 side by side; blobrt reads its thread count once
// per process.
#ifndef BLOBRT_BENCH_BUSY_HPP
#define BLOBRT_BENCH_BUSY_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace blobrt::bench::busy {

// A gemm as Caffe's caffe_cpu_gemm calls it (row-major, C = op(A) op(B), m x n x k).
struct GemmCase {
  std::string name;  // e.g. "gemm_500x64x800_NN"
  bool trans_a, trans_b;
  int m, n, k;
  const char* what;  // where Caffe's LeNet calls it
};

// The 500x64x800 and the gemms of LeNet (batch 64) large enough to be threaded
// (from 2^20 multiply-adds; conv1's 20x576x25 and ip2's 64x10x500 run on one thread).
std::vector<GemmCase> gemm_cases(bool smoke);

// The LeNet step's name: "lenet_step_B" for batch B.
std::string lenet_name(int batch);

// The worker's side: set up `workload` (a gemm case's name or lenet_step_B), then serve the
// driver on stdin/stdout until end of file (bench_busy_worker.cpp). Exit code.
int serve(const std::string& workload);

// The environment variable that makes blobrt-bench-busy a worker for the named workload.
constexpr const char* kWorkerVariable = "BLOBRT_BENCH_BUSY_WORKER";

// The worker's protocol: the driver writes a count of calls (int64); the worker runs the
// workload that many times and answers the nanoseconds they took (int64; negative: it
// failed, and says why on stderr). Once set up, the worker first writes kNameBytes bytes:
// the id of the device that ran Caffe's math (host_math_device()), NUL-padded.
constexpr int kNameBytes = 64;

}  // namespace blobrt::bench::busy

#endif
