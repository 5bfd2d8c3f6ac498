// Caffe's math beyond level 1 on OpenCL device 0, against the raw library call in the same
// run (docs/opencl.md, "gemm and gemv", "Element-wise operations"):
//   math/opencl:0/gemm/DTYPE/MxNxK    Device::gemm (the plugin: CLBlast's Gemm)
//   math/clblast/gemm/DTYPE/MxNxK     clblast::Gemm on the same cl_mem buffers, own queue
//   math/opencl:0/ew_OP/DTYPE/N       Device::elementwise; bytes/s, label = the probe's
//                                     pattern (probe/stream/PATTERN/DTYPE/N is the ceiling)
// Every timed call ends with synchronize() / clFinish, so the queue is measured whole.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>

#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_elementwise.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::bench {
namespace {

const char* const kDevice = "opencl:0";

struct Shape {
  std::int64_t m, n, k;
  std::string text() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};

template <typename T>
DeviceBuffer filled(Device& device, std::int64_t count) {
  std::vector<T> host(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) host[i] = T(1) + T(i % 7) * T(0.125);
  DeviceBuffer buffer = device.allocate(host.size() * sizeof(T));
  device.copy_to_device(host.data(), buffer, 0, host.size() * sizeof(T));
  return buffer;
}

// A queue of our own on the context that owns `buffer` (the plugin's), for the raw calls.
struct RawQueue {
  explicit RawQueue(cl_mem buffer) {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof context, &context, nullptr);
    clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr);
    queue = clCreateCommandQueue(context, device, 0, nullptr);
  }
  ~RawQueue() {
    if (queue) clReleaseCommandQueue(queue);
  }
  cl_command_queue queue = nullptr;
};

template <typename T>
void gemm(benchmark::State& state, bool raw, Shape s) {
  std::shared_ptr<Device> device = open_device(kDevice);
  DeviceBuffer a = filled<T>(*device, s.m * s.k), b = filled<T>(*device, s.k * s.n), c = filled<T>(*device, s.m * s.n);
  const Precision precision = sizeof(T) == 8 ? Precision::kFloat64 : Precision::kFloat32;
  RawQueue q(static_cast<cl_mem>(a));
  device->synchronize();
  auto once = [&] {
    if (raw) {
      auto status = clblast::Gemm<T>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, s.m,
                                     s.n, s.k, T(1), static_cast<cl_mem>(a), 0, s.k, static_cast<cl_mem>(b), 0, s.n,
                                     T(0), static_cast<cl_mem>(c), 0, s.n, &q.queue);
      if (status != clblast::StatusCode::kSuccess) state.SkipWithError("clblast::Gemm failed");
      clFinish(q.queue);
    } else {
      device->gemm(precision, Transpose::kNo, Transpose::kNo, s.m, s.n, s.k, 1.0, a, 0, b, 0, 0.0, c, 0);
      device->synchronize();
    }
  };
  once();  // warm-up: kernel compilation
  for (auto _ : state) once();
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * s.m * s.n * s.k * state.iterations() * 1e-9, benchmark::Counter::kIsRate);
  device->release(a);
  device->release(b);
  device->release(c);
}

// Every element-wise code of the list, with the probe pattern of the bytes it must move
// (ew_ops(), bench_elementwise.hpp).
using EwInfo = EwOp;

template <typename T>
void elementwise(benchmark::State& state, EwInfo info, std::int64_t n) {
  std::shared_ptr<Device> device = open_device(kDevice);
  DeviceBuffer a = filled<T>(*device, n), b = filled<T>(*device, n), y = filled<T>(*device, n);
  const Precision precision = sizeof(T) == 8 ? Precision::kFloat64 : Precision::kFloat32;
  // axpby: y converges to a; add_scalar adds 2^-20 per call (no overflow in any run).
  const double alpha = info.op == ElementwiseOp::kAddScalar ? 1.0 / (1 << 20) : 0.5;
  auto once = [&] {
    device->elementwise(precision, info.op, n, alpha, 0.5, a, 0, b, 0, y, 0);
    device->synchronize();
  };
  once();  // warm-up: kernel compilation, first touch
  for (auto _ : state) once();
  state.SetBytesProcessed(state.iterations() * bytes_moved(info.pattern, n, sizeof(T)));
  state.SetLabel(ew_label(info));
  device->release(a);
  device->release(b);
  device->release(y);
}

bool have_device() {
  try {
    return open_device(kDevice) != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

template <typename T>
void register_type() {
  const std::vector<Shape> shapes =
      smoke() ? std::vector<Shape>{{16, 16, 16}, {64, 80, 50}} : std::vector<Shape>{{2048, 2048, 2048}, {64, 800, 500}};
  for (Shape s : shapes) {
    const std::string dims = s.text(), dtype = dtype_name<T>();
    reg("math/" + std::string(kDevice) + "/gemm/" + dtype + "/" + dims,
        [s](benchmark::State& st) { gemm<T>(st, false, s); });
    reg("math/clblast/gemm/" + dtype + "/" + dims, [s](benchmark::State& st) { gemm<T>(st, true, s); });
  }
  const std::int64_t n = smoke() ? (1 << 12) : (1 << 24);
  for (const EwInfo& info : ew_ops()) {
    reg(name("math", kDevice, std::string("ew_") + to_string(info.op), dtype_name<T>(), n),
        [info, n](benchmark::State& st) { elementwise<T>(st, info, n); });
  }
}

}  // namespace

void register_opencl_math() {
  if (!have_device()) return;
  register_type<float>();
  // double only where the device has it (PoCL does).
  if (open_device(kDevice)->description().supports_fp64) register_type<double>();
}

}  // namespace blobrt::bench
