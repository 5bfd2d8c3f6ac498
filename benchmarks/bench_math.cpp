// Caffe's math beyond level 1 through Device::gemm / gemv / elementwise, with the
// references tools/bench_report.py divides by, measured in the same run:
//  - math/DEVICE/gemm_MxNxK/DTYPE/M against raw/blis/gemm_MxNxK/DTYPE/M, a bli_?gemm call
//    on the same buffers with the same strides (2048^3 and Caffe's tall-skinny 64x800x500);
//    counters: GFLOPS;
//  - math/DEVICE/gemv_{N,T}_MxN/DTYPE/M against raw/blis/gemv_{N,T}_MxN/DTYPE/M (one
//    bli_?gemv, which BLIS runs on one thread) and the copy probe (A is read once);
//  - math/DEVICE/ew_OP/DTYPE/N for every element-wise operation at 2^24 (smoke: 2^12) on
//    the host-memory devices, against the probe of its access pattern (label: pattern);
//    at N = 1 against device/DEVICE/scal/DTYPE/1, the level-1 dispatch.
#ifndef BLOBRT_BENCH_NO_RAW
#include <blis.h>
#endif

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_elementwise.hpp"
#include "bench_fill.hpp"
#include "blobrt/runtime.hpp"
#include "blobrt_kernels/huge_pages.hpp"

namespace blobrt::bench {
namespace {

template <typename T>
constexpr blobrt::Precision precision_of() {
  return sizeof(T) == 8 ? blobrt::Precision::kFloat64 : blobrt::Precision::kFloat32;
}

// Buffers of a device, filled on it (fill_periodic: any memory model). On host-memory
// devices a handle is the host pointer, so the raw BLIS calls use the same buffers (ptr()).
template <typename T>
struct Buffers {
  Buffers(Device& device, std::vector<std::int64_t> counts) : device(device), counts(counts) {
    std::int64_t seed = 1;
    for (std::int64_t count : counts) {
      handles.push_back(device.allocate(static_cast<std::size_t>(count ? count : 1) * sizeof(T)));
      fill_periodic<T>(device, handles.back(), count, 13,
                       [seed](std::int64_t k) { return T(0.5) + T((k * seed) % 13) * T(0.0625); });
      ++seed;
    }
  }
  ~Buffers() {
    for (DeviceBuffer h : handles) device.release(h);
  }
  void fill(std::size_t which, T value) {
    fill_periodic<T>(device, handles[which], counts[which], 1, [value](std::int64_t) { return value; });
  }
  T* ptr(std::size_t which) const { return static_cast<T*>(handles[which]); }
  Device& device;
  std::vector<std::int64_t> counts;
  std::vector<DeviceBuffer> handles;
};

// Asynchronous devices are timed to completion (a no-op on host-memory devices).
void finish(Device& device) {
  if (device.description().memory_model != MemoryModel::kShared) device.synchronize();
}

std::vector<GemmShape> gemm_shapes() {
  if (smoke()) return {{64, 80, 50}};
  return {{2048, 2048, 2048}, {64, 800, 500}};
}

void flops(benchmark::State& state, const GemmShape& s) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * s.m * s.n * s.k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <typename T>
void device_gemm(benchmark::State& state, const std::string& id, GemmShape s) {
  std::shared_ptr<Device> device = open_device(id);
  Buffers<T> b(*device, {s.m * s.k, s.k * s.n, s.m * s.n});
  auto once = [&] {
    device->gemm(precision_of<T>(), Transpose::kNo, Transpose::kNo, s.m, s.n, s.k, 1.0, b.handles[0], 0,
                 b.handles[1], 0, 0.0, b.handles[2], 0);
    finish(*device);
  };
  once();
  for (auto _ : state) once();
  flops(state, s);
}

std::vector<GemvShape> gemv_shapes() {
  if (smoke()) return {{false, 64, 80}, {true, 64, 80}};
  return {{false, 4096, 4096}, {true, 4096, 4096}, {false, 1000, 4096}};
}

template <typename T>
void device_gemv(benchmark::State& state, const std::string& id, GemvShape s) {
  std::shared_ptr<Device> device = open_device(id);
  Buffers<T> b(*device, {s.m * s.n, s.trans ? s.m : s.n, s.trans ? s.n : s.m});
  auto once = [&] {
    device->gemv(precision_of<T>(), s.trans ? Transpose::kYes : Transpose::kNo, s.m, s.n, 1.0, b.handles[0], 0,
                 b.handles[1], 0, 0.0, b.handles[2], 0);
    finish(*device);
  };
  once();
  for (auto _ : state) once();
  state.SetBytesProcessed(state.iterations() * s.m * s.n * static_cast<std::int64_t>(sizeof(T)));
}

#ifndef BLOBRT_BENCH_NO_RAW
void raw_gemm(const GemmShape& s, float* a, float* b, float* c) {
  float alpha = 1, beta = 0;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, s.m, s.n, s.k, &alpha, a, s.k, 1, b, s.n, 1, &beta, c, s.n, 1);
}
void raw_gemm(const GemmShape& s, double* a, double* b, double* c) {
  double alpha = 1, beta = 0;
  bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, s.m, s.n, s.k, &alpha, a, s.k, 1, b, s.n, 1, &beta, c, s.n, 1);
}
void raw_gemv(const GemvShape& s, float* a, float* x, float* y) {
  float alpha = 1, beta = 0;
  bli_sgemv(s.trans ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, s.m, s.n, &alpha, a, s.n, 1, x, 1,
            &beta, y, 1);
}
void raw_gemv(const GemvShape& s, double* a, double* x, double* y) {
  double alpha = 1, beta = 0;
  bli_dgemv(s.trans ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, s.m, s.n, &alpha, a, s.n, 1, x, 1,
            &beta, y, 1);
}

// On the blis device's own buffers, after the device is open (so BLIS's threads are the
// ones the plugin set: the same for both calls).
template <typename T>
void blis_gemm(benchmark::State& state, GemmShape s) {
  std::shared_ptr<Device> device = open_device("blis:0");
  Buffers<T> b(*device, {s.m * s.k, s.k * s.n, s.m * s.n});
  raw_gemm(s, b.ptr(0), b.ptr(1), b.ptr(2));
  for (auto _ : state) raw_gemm(s, b.ptr(0), b.ptr(1), b.ptr(2));
  flops(state, s);
  state.counters["blis_threads"] = static_cast<double>(bli_thread_get_num_threads());
}

template <typename T>
void blis_gemv(benchmark::State& state, GemvShape s) {
  std::shared_ptr<Device> device = open_device("blis:0");
  Buffers<T> b(*device, {s.m * s.n, s.trans ? s.m : s.n, s.trans ? s.n : s.m});
  raw_gemv(s, b.ptr(0), b.ptr(1), b.ptr(2));
  for (auto _ : state) raw_gemv(s, b.ptr(0), b.ptr(1), b.ptr(2));
  state.SetBytesProcessed(state.iterations() * s.m * s.n * static_cast<std::int64_t>(sizeof(T)));
}
#endif

// Every element-wise code of the list (blobrt/elementwise_operations.h), with the probe
// pattern that bounds it and its operands (ew_ops(), bench_elementwise.hpp).
using EwInfo = EwOp;

template <typename T>
void device_elementwise(benchmark::State& state, const std::string& id, EwInfo info, std::int64_t n) {
  std::shared_ptr<Device> device = open_device(id);
  Buffers<T> b(*device, {n, n, n});
  // Values that stay put over millions of calls: axpby keeps y at 1 (0.5 a + 0.5 y with
  // a = y = 1 is exact), add_scalar adds 0, the others write y from a and b only.
  b.fill(0, T(1));
  b.fill(2, T(1));
  const double alpha = info.op == ElementwiseOp::kAddScalar ? 0.0 : info.op == ElementwiseOp::kPowx ? 1.5 : 0.5;
  auto once = [&] {
    device->elementwise(precision_of<T>(), info.op, n, alpha, 0.5, info.a ? b.handles[0] : nullptr, 0,
                        info.b ? b.handles[1] : nullptr, 0, b.handles[2], 0);
    finish(*device);
  };
  once();
  for (auto _ : state) once();
  state.SetBytesProcessed(state.iterations() * bytes_moved(info.pattern, n, sizeof(T)));
  state.SetLabel(ew_label(info));
}

template <typename T>
void register_ops(const std::string& id, const MathSizes& sizes) {
  const char* dtype = dtype_name<T>();
  for (const GemmShape& s : sizes.gemm) {
    reg(name("math", id, s.name(), dtype, s.m), [id, s](benchmark::State& st) { device_gemm<T>(st, id, s); });
  }
  for (const GemvShape& s : sizes.gemv) {
    reg(name("math", id, s.name(), dtype, s.m), [id, s](benchmark::State& st) { device_gemv<T>(st, id, s); });
  }
  for (const EwInfo& info : ew_ops()) {
    for (std::int64_t n : sizes.elementwise) {
      reg(name("math", id, std::string("ew_") + to_string(info.op), dtype, n),
          [id, info, n](benchmark::State& st) { device_elementwise<T>(st, id, info, n); });
    }
  }
}

#ifndef BLOBRT_BENCH_NO_RAW
template <typename T>
void register_raw_blis() {
  const char* dtype = dtype_name<T>();
  for (const GemmShape& s : gemm_shapes()) {
    reg(name("raw", "blis", s.name(), dtype, s.m), [s](benchmark::State& st) { blis_gemm<T>(st, s); });
  }
  for (const GemvShape& s : gemv_shapes()) {
    reg(name("raw", "blis", s.name(), dtype, s.m), [s](benchmark::State& st) { blis_gemv<T>(st, s); });
  }
}
#endif

}  // namespace

void register_math_ops(const std::string& id, const MathSizes& sizes) {
  register_ops<float>(id, sizes);
  register_ops<double>(id, sizes);
}

// The host-memory devices (the raw BLIS calls share their buffers) at the CPU sizes.
void register_math() {
  const MathSizes sizes{gemm_shapes(), gemv_shapes(), {1, smoke() ? std::int64_t(1) << 12 : std::int64_t(1) << 24}};
  for (const std::string& id : available_devices()) {
    if (open_device(id)->description().memory_model == MemoryModel::kShared) register_math_ops(id, sizes);
  }
#ifndef BLOBRT_BENCH_NO_RAW
  register_raw_blis<float>();
  register_raw_blis<double>();
#endif
}

}  // namespace blobrt::bench
