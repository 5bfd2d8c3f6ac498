// blobrt-bench-cuda: the first CUDA device through blobrt next to its yardsticks, in one
// run (issue 27; tools/bench_report.py --cuda turns the JSON into
// docs/performance-results-cuda.md):
//   probe/cuda_kernel/PATTERN/DTYPE/N   plain streaming kernels (cuda_probe.cu)
//   probe/cuda_memcpy/copy/DTYPE/N      cudaMemcpyAsync device to device + sync
//   raw/cudamemcpy/{h2d,d2h}/DTYPE/N    cudaMemcpy between pinned host memory and the device
//   raw/cudamemcpy/round_trip/float/1   one float there and back: two cudaMemcpy calls
//   raw/cublas/{axpy,dot,asum,scal}/DTYPE/N, raw/cublas/gemm_*, raw/cublas/gemv_*
//                                       cuBLAS on a handle and blocking stream of our own
//                                       (host pointer mode, as the plugin), synchronised
//   device/ID/..., blob/ID/..., math/ID/...   blobrt (bench_device, bench_blob, bench_math)
// The raw calls use buffers allocated through blobrt's device (its handles are CUDA
// pointers) and its pinned host memory, so both sides move the same bytes. The versions
// (GPU, driver, runtime, cuBLAS, NCCL) go into the JSON's context.
// Without a usable CUDA device it says why on stderr and exits 77 (skipped).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "bench_common.hpp"
#include "bench_fill.hpp"
#include "blobrt/runtime.hpp"
#include "cuda_probe.hpp"

namespace blobrt::bench {
namespace {

struct Target {
  std::string id;  // blobrt's id of the device ("cuda:0")
  int ordinal = 0;
  int sm_count = 0;
};
Target target;

std::vector<std::int64_t> gpu_sizes() {
  if (smoke()) return {1, 1 << 12};
  // 2^26 (256/512 MiB, far beyond L2) is where issue 27's bandwidth targets hold; larger
  // sizes would add setup (pinned buffers for the copies) and memory for the same figure.
  return {1, 1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26};
}

// A cuBLAS handle on a blocking stream of its own, made once: what a program calling cuBLAS
// directly would have.
struct Raw {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  std::string error;
};
const Raw& raw() {
  static const Raw r = [] {
    Raw made;
    cudaError_t e = cudaSetDevice(target.ordinal);
    if (e == cudaSuccess) e = cudaStreamCreate(&made.stream);
    if (e != cudaSuccess) {
      made.error = std::string("cudaSetDevice/cudaStreamCreate: ") + cudaGetErrorName(e);
      return made;
    }
    cublasStatus_t s = cublasCreate(&made.blas);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetStream(made.blas, made.stream);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetPointerMode(made.blas, CUBLAS_POINTER_MODE_HOST);
    if (s != CUBLAS_STATUS_SUCCESS) {
      made.error = std::string("cublasCreate/SetStream/SetPointerMode: ") + cublasGetStatusName(s);
    }
    return made;
  }();
  return r;
}

// Each raw call's status is checked inside the timed loop, as a real caller would.
bool ok(benchmark::State& state, cudaError_t e, const char* call) {
  if (e == cudaSuccess) return true;
  state.SkipWithError((std::string(call) + " returned " + cudaGetErrorName(e)).c_str());
  return false;
}
bool ok(benchmark::State& state, cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  state.SkipWithError((std::string(call) + " returned " + cublasGetStatusName(s)).c_str());
  return false;
}

// Buffers of `counts` elements allocated through blobrt's device and filled on it with the
// operand values (fill_operand), and `pinned` elements of pinned host memory from the same
// device. `error` says what failed, if anything.
template <typename T>
struct Operands {
  // A failure (out of memory, a CUDA error) becomes `error`, the benchmark's, not the run's end.
  explicit Operands(std::vector<std::int64_t> counts, std::int64_t pinned = 0) : device(open_device(target.id)) {
    try {
      for (std::int64_t count : counts) {
        handles.push_back(device->allocate(static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(T)));
        fill_operand<T>(*device, handles.back(), count);
      }
      device->synchronize();
      if (pinned > 0) {
        host = static_cast<T*>(device->allocate_host(static_cast<std::size_t>(pinned) * sizeof(T)));
        if (!host) error = "the device lends no pinned host memory (allocate_host)";
      }
    } catch (const std::exception& e) {
      error = std::string("setting up the operands: ") + e.what();
    }
  }
  ~Operands() {
    for (DeviceBuffer h : handles) device->release(h);
    if (host) device->release_host(host);
  }
  T* operator[](std::size_t i) const { return static_cast<T*>(handles[i]); }
  std::shared_ptr<Device> device;
  std::vector<DeviceBuffer> handles;
  T* host = nullptr;
  std::string error;
};

// Runs `once` (returns false after SkipWithError) untimed, then timed; not at all when the
// setup failed.
template <typename Once>
void timed(benchmark::State& state, const std::string& setup_error, Once once) {
  const std::string& error = !raw().error.empty() ? raw().error : setup_error;
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  if (!once()) return;
  for (auto _ : state) {
    if (!once()) break;  // Google Benchmark: leave the loop after SkipWithError
  }
}

// The operands' sum (or sum of squares) over n elements, in closed form: values repeat
// every 7 elements (fill_operand, bench_fill.hpp).
double operand_sum(std::int64_t n, bool squares) {
  double period = 0, rest = 0;
  for (int k = 0; k < 7; ++k) {
    const double v = 1 + k * 0.125, term = squares ? v * v : v;
    period += term;
    if (k < n % 7) rest += term;
  }
  return static_cast<double>(n / 7) * period + rest;
}

// The probe: one kernel and a synchronisation per call. sum and dot also bring their
// result to pinned host memory, as a reduction returning a host value (cuBLAS in host
// pointer mode) must, and a ceiling is only a ceiling if the kernel did the work: their
// result is checked against the closed form (x and y hold the operand values, only read).
template <typename T>
void probe_kernel(benchmark::State& state, cuda_probe::Kernel kernel, Pattern pattern, std::int64_t n) {
  const bool reduction = kernel == cuda_probe::Kernel::kSum || kernel == cuda_probe::Kernel::kDot;
  Operands<T> o({n, n, static_cast<std::int64_t>(cuda_probe::scratch_bytes(target.sm_count) / sizeof(T) + 1)}, 1);
  const void* result = static_cast<char*>(o.handles[2]) + cuda_probe::result_offset(target.sm_count, sizeof(T));
  timed(state, o.error, [&] {
    return ok(state,
              cuda_probe::launch(kernel, sizeof(T) == 8, n, o[0], o[1], o[2], target.sm_count, raw().stream),
              "probe kernel launch") &&
           (!reduction ||
            ok(state, cudaMemcpyAsync(o.host, result, sizeof(T), cudaMemcpyDeviceToHost, raw().stream),
               "cudaMemcpyAsync")) &&
           ok(state, cudaStreamSynchronize(raw().stream), "cudaStreamSynchronize");
  });
  state.SetBytesProcessed(state.iterations() * bytes_moved(pattern, n, sizeof(T)));
  const double expected = operand_sum(n, kernel == cuda_probe::Kernel::kDot);
  if (reduction && !state.error_occurred() && std::abs(*o.host - expected) > 1e-3 * expected) {
    state.SkipWithError(
        ("probe kernel's sum is " + std::to_string(*o.host) + ", expected " + std::to_string(expected)).c_str());
  }
}

template <typename T>
void probe_memcpy(benchmark::State& state, std::int64_t n) {
  Operands<T> o({n, n});
  const std::size_t bytes = n * sizeof(T);
  timed(state, o.error, [&] {
    return ok(state, cudaMemcpyAsync(o[1], o[0], bytes, cudaMemcpyDeviceToDevice, raw().stream), "cudaMemcpyAsync") &&
           ok(state, cudaStreamSynchronize(raw().stream), "cudaStreamSynchronize");
  });
  state.SetBytesProcessed(state.iterations() * bytes_moved(Pattern::kCopy, n, sizeof(T)));
}

template <typename T>
void raw_copy(benchmark::State& state, bool to_device, std::int64_t n) {
  Operands<T> o({n}, n);
  const std::size_t bytes = n * sizeof(T);
  timed(state, o.error, [&] {
    return to_device ? ok(state, cudaMemcpy(o[0], o.host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy")
                     : ok(state, cudaMemcpy(o.host, o[0], bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  });
  state.SetBytesProcessed(state.iterations() * bytes_moved(Pattern::kCopy, n, sizeof(T)));
}

void raw_round_trip(benchmark::State& state) {
  Operands<float> o({1}, 1);
  timed(state, o.error, [&] {
    return ok(state, cudaMemcpy(o[0], o.host, sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") &&
           ok(state, cudaMemcpy(o.host, o[0], sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  });
}

// cuBLAS's 64-bit entry points, as the plugin calls them.
cublasStatus_t axpy(cublasHandle_t h, std::int64_t n, const float* a, const float* x, float* y) {
  return cublasSaxpy_v2_64(h, n, a, x, 1, y, 1);
}
cublasStatus_t axpy(cublasHandle_t h, std::int64_t n, const double* a, const double* x, double* y) {
  return cublasDaxpy_v2_64(h, n, a, x, 1, y, 1);
}
cublasStatus_t dot(cublasHandle_t h, std::int64_t n, const float* x, const float* y, float* r) {
  return cublasSdot_v2_64(h, n, x, 1, y, 1, r);
}
cublasStatus_t dot(cublasHandle_t h, std::int64_t n, const double* x, const double* y, double* r) {
  return cublasDdot_v2_64(h, n, x, 1, y, 1, r);
}
cublasStatus_t asum(cublasHandle_t h, std::int64_t n, const float* x, float* r) {
  return cublasSasum_v2_64(h, n, x, 1, r);
}
cublasStatus_t asum(cublasHandle_t h, std::int64_t n, const double* x, double* r) {
  return cublasDasum_v2_64(h, n, x, 1, r);
}
cublasStatus_t scal(cublasHandle_t h, std::int64_t n, const float* a, float* x) {
  return cublasSscal_v2_64(h, n, a, x, 1);
}
cublasStatus_t scal(cublasHandle_t h, std::int64_t n, const double* a, double* x) {
  return cublasDscal_v2_64(h, n, a, x, 1);
}
cublasStatus_t gemm(cublasHandle_t h, const GemmShape& s, const float* a, const float* b, float* c) {
  const float one = 1, zero = 0;  // row-major C = A B is column-major C^T = B^T A^T
  return cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b, s.n, a, s.k, &zero, c, s.n);
}
cublasStatus_t gemm(cublasHandle_t h, const GemmShape& s, const double* a, const double* b, double* c) {
  const double one = 1, zero = 0;
  return cublasDgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b, s.n, a, s.k, &zero, c, s.n);
}
cublasStatus_t gemv(cublasHandle_t h, const GemvShape& s, const float* a, const float* x, float* y) {
  const float one = 1, zero = 0;  // row-major A (m x n) is column-major A^T
  return cublasSgemv_v2_64(h, s.trans ? CUBLAS_OP_N : CUBLAS_OP_T, s.n, s.m, &one, a, s.n, x, 1, &zero, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, const GemvShape& s, const double* a, const double* x, double* y) {
  const double one = 1, zero = 0;
  return cublasDgemv_v2_64(h, s.trans ? CUBLAS_OP_N : CUBLAS_OP_T, s.n, s.m, &one, a, s.n, x, 1, &zero, y, 1);
}

template <typename T>
void raw_level1(benchmark::State& state, Level1 op, Pattern pattern, std::int64_t n) {
  Operands<T> o({n, n});
  const T alpha = T(0.999), minus_one = T(-1);  // as bench_device.cpp
  T result = 0;
  const cublasHandle_t h = raw().blas;
  timed(state, o.error, [&] {
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    switch (op) {
      case Level1::kAxpy: s = axpy(h, n, &alpha, o[0], o[1]); break;
      case Level1::kDot: s = dot(h, n, o[0], o[1], &result); break;
      case Level1::kAsum: s = asum(h, n, o[0], &result); break;
      case Level1::kScal: s = scal(h, n, &minus_one, o[0]); break;
    }
    benchmark::DoNotOptimize(result);
    return ok(state, s, "cuBLAS") && ok(state, cudaStreamSynchronize(raw().stream), "cudaStreamSynchronize");
  });
  state.SetBytesProcessed(state.iterations() * bytes_moved(pattern, n, sizeof(T)));
}

template <typename T>
void raw_gemm(benchmark::State& state, GemmShape s) {
  Operands<T> o({s.m * s.k, s.k * s.n, s.m * s.n});
  timed(state, o.error, [&] {
    return ok(state, gemm(raw().blas, s, o[0], o[1], o[2]), "cublas?gemm_v2_64") &&
           ok(state, cudaStreamSynchronize(raw().stream), "cudaStreamSynchronize");
  });
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * s.m * s.n * s.k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <typename T>
void raw_gemv(benchmark::State& state, GemvShape s) {
  Operands<T> o({s.m * s.n, s.trans ? s.m : s.n, s.trans ? s.n : s.m});
  timed(state, o.error, [&] {
    return ok(state, gemv(raw().blas, s, o[0], o[1], o[2]), "cublas?gemv_v2_64") &&
           ok(state, cudaStreamSynchronize(raw().stream), "cudaStreamSynchronize");
  });
  state.SetBytesProcessed(state.iterations() * s.m * s.n * static_cast<std::int64_t>(sizeof(T)));
}

MathSizes math_sizes() {
  if (smoke()) return {{{64, 80, 50}}, {{false, 64, 80}, {true, 64, 80}}, {1, 1 << 12}};
  return {{{4096, 4096, 4096}}, {{false, 4096, 4096}, {true, 4096, 4096}}, {1, 1 << 26}};
}

template <typename T>
void register_raw() {
  const char* dtype = dtype_name<T>();
  const std::pair<cuda_probe::Kernel, Pattern> probes[] = {
      {cuda_probe::Kernel::kFill, Pattern::kFill},   {cuda_probe::Kernel::kCopy, Pattern::kCopy},
      {cuda_probe::Kernel::kScale, Pattern::kScale}, {cuda_probe::Kernel::kTriad, Pattern::kTriad},
      {cuda_probe::Kernel::kSum, Pattern::kSum},     {cuda_probe::Kernel::kDot, Pattern::kDot}};
  const std::pair<Level1, Pattern> level1[] = {{Level1::kAxpy, Pattern::kTriad},
                                               {Level1::kDot, Pattern::kDot},
                                               {Level1::kAsum, Pattern::kSum},
                                               {Level1::kScal, Pattern::kScale}};
  const char* level1_names[] = {"axpy", "dot", "asum", "scal"};
  for (std::int64_t n : gpu_sizes()) {
    if (n > 1) {  // bandwidth needs bytes; n = 1 is the dispatch figures' business
      for (const auto& [kernel, pattern] : probes) {
        reg(name("probe", "cuda_kernel", to_string(pattern), dtype, n),
            [kernel = kernel, pattern = pattern, n](benchmark::State& s) { probe_kernel<T>(s, kernel, pattern, n); });
      }
      reg(name("probe", "cuda_memcpy", "copy", dtype, n), [n](benchmark::State& s) { probe_memcpy<T>(s, n); });
    }
    reg(name("raw", "cudamemcpy", "h2d", dtype, n), [n](benchmark::State& s) { raw_copy<T>(s, true, n); });
    reg(name("raw", "cudamemcpy", "d2h", dtype, n), [n](benchmark::State& s) { raw_copy<T>(s, false, n); });
    for (std::size_t i = 0; i < 4; ++i) {
      const auto [op, pattern] = level1[i];
      reg(name("raw", "cublas", level1_names[i], dtype, n),
          [op = op, pattern = pattern, n](benchmark::State& s) { raw_level1<T>(s, op, pattern, n); });
    }
  }
  const MathSizes math = math_sizes();
  for (const GemmShape& s : math.gemm) {
    reg(name("raw", "cublas", s.name(), dtype, s.m), [s](benchmark::State& st) { raw_gemm<T>(st, s); });
  }
  for (const GemvShape& s : math.gemv) {
    reg(name("raw", "cublas", s.name(), dtype, s.m), [s](benchmark::State& st) { raw_gemv<T>(st, s); });
  }
}

void register_all() {
  register_raw<float>();
  register_raw<double>();
  reg(name("raw", "cudamemcpy", "round_trip", "float", 1), raw_round_trip);
  register_device_ops(target.id, gpu_sizes());
  register_blob_ops(target.id, gpu_sizes());
  register_math_ops(target.id, math_sizes());
}

// The first device that says its buffers are CUDA device pointers; else why there is none.
std::string find_target() {
  std::string why;
  for (const std::string& id : available_devices()) {
    try {
      const DeviceDescription& d = open_device(id)->description();
      if (d.native_type == NativeDeviceType::kCuda && d.addressable_handles) {
        target.id = id;
        target.ordinal = d.native_index;
        return "";
      }
    } catch (const std::exception& e) {
      why += (why.empty() ? " " : "; ") + id + " would not open: " + e.what();
    }
  }
  for (const PluginReport& p : inventory().plugins) {
    if (!p.usable) why += (why.empty() ? " " : "; ") + p.name + ": " + p.reason;
  }
  // One line: run-on-gpu.sh reports a skipped step by its last line.
  return "no usable device holds CUDA memory (plugins not usable:" + (why.empty() ? std::string(" none") : why) + ")";
}

std::string nccl_version() {
  void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!nccl) return std::string("not found: ") + dlerror();
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(nccl, "ncclGetVersion"));
  int code = 0;
  if (!get || get(&code) != 0) return "libnccl.so.2 loaded, ncclGetVersion failed";
  // NCCL_VERSION_CODE since 2.9: major * 10000 + minor * 100 + patch
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// Returns what failed, or "".
std::string add_context() {
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, target.ordinal); e != cudaSuccess) {
    return "cudaGetDeviceProperties(" + std::to_string(target.ordinal) + ") for " + target.id + " returned " +
           cudaGetErrorName(e);
  }
  target.sm_count = prop.multiProcessorCount;
  int runtime = 0, driver = 0, major = 0, minor = 0, patch = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  benchmark::AddCustomContext("blobrt_device", target.id);
  benchmark::AddCustomContext("gpu_name", prop.name);
  benchmark::AddCustomContext("gpu_compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  benchmark::AddCustomContext("gpu_memory_bytes", std::to_string(prop.totalGlobalMem));
  benchmark::AddCustomContext("gpu_sm_count", std::to_string(prop.multiProcessorCount));
  benchmark::AddCustomContext("cuda_driver", cuda_version(driver));
  benchmark::AddCustomContext("cuda_runtime", cuda_version(runtime));
  benchmark::AddCustomContext("cublas", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
  benchmark::AddCustomContext("nccl", nccl_version());
  benchmark::AddCustomContext("blobrt_version", version());
  return "";
}

}  // namespace
}  // namespace blobrt::bench

int main(int argc, char** argv) {
  bool smoke = false;
  const blobrt::bench::Driver driver{
      "blobrt-bench-cuda",
      "A CUDA device through blobrt and its yardsticks (bandwidth probe, raw cudaMemcpy and cuBLAS) in one run "
      "(tools/bench_report.py --cuda makes the results page of it, docs/cuda.md); exit 77 when no CUDA device is usable",
      blobrt::version(), &smoke,
      "Exit code 77: no usable device holds CUDA memory (skipped; the reason, one line, on stderr), nothing\n"
      "run (--benchmark_list_tests still lists what a run on cuda:0 would measure). 1 also when the CUDA\n"
      "device cannot be queried.\n"};
  std::vector<std::string> args;
  if (const auto exit_code = blobrt::bench::parse_command_line(argc, argv, driver, args)) return *exit_code;
  blobrt::bench::set_smoke(smoke);
  const std::string why = blobrt::bench::find_target();
  if (!why.empty() && !blobrt::bench::listing_only(args)) {
    std::fprintf(stderr, "blobrt-bench-cuda: skipped: %s\n", why.c_str());
    return 77;
  }
  if (!why.empty()) {
    // --benchmark_list_tests runs nothing: the names are those a run on cuda:0 would have
    // (tests/bench/bench_cuda_test.py holds them against what tools/bench_report.py reads).
    std::fprintf(stderr, "blobrt-bench-cuda: %s; listing what a run on cuda:0 would measure\n", why.c_str());
    blobrt::bench::target = {"cuda:0", 0, 1};
  } else if (const std::string failed = blobrt::bench::add_context(); !failed.empty()) {
    std::fprintf(stderr, "blobrt-bench-cuda: %s\n", failed.c_str());
    return 1;
  }
  blobrt::bench::register_all();
  return blobrt::bench::run_registered(argv[0], driver, args, "more where one iteration outlasts it, and setup");
}
