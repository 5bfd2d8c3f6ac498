// Each Device operation through blobrt (the plugin table, or the host device), on every
// device this machine can open. One untimed call first (kernel compilation, page faults);
// every timed call ends with synchronize(), so asynchronous backends are measured whole.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "bench_common.hpp"
#include "bench_fill.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::bench {
namespace {

enum class Op { kMemset, kHostToDevice, kDeviceToHost, kDeviceToDevice, kAxpy, kDot, kAsum, kScal };

struct OpInfo {
  Op op;
  const char* name;
  Pattern pattern;
};

const OpInfo kOps[] = {
    {Op::kMemset, "memset", Pattern::kFill},      {Op::kHostToDevice, "h2d", Pattern::kCopy},
    {Op::kDeviceToHost, "d2h", Pattern::kCopy},   {Op::kDeviceToDevice, "d2d", Pattern::kCopy},
    {Op::kAxpy, "axpy", Pattern::kTriad},         {Op::kDot, "dot", Pattern::kDot},
    {Op::kAsum, "asum", Pattern::kSum},           {Op::kScal, "scal", Pattern::kScale},
};

template <typename T>
void run(benchmark::State& state, const std::string& id, const OpInfo& info, std::int64_t n) {
  std::shared_ptr<Device> device = open_device(id);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  const bool host_memory = device->description().memory_model == blobrt::MemoryModel::kShared;
  DeviceBuffer x = device->allocate(bytes);
  DeviceBuffer y = device->allocate(bytes);
  fill_operand<T>(*device, x, n);
  fill_operand<T>(*device, y, n);
  // Host memory only for the copies: pinned where the device lends it (as Caffe's GPU mode).
  const bool copies = info.op == Op::kHostToDevice || info.op == Op::kDeviceToHost;
  void* pinned = copies ? device->allocate_host(bytes) : nullptr;
  std::vector<T> ordinary(copies && !pinned ? n : 0);
  T* host = pinned ? static_cast<T*>(pinned) : ordinary.data();
  if (copies) std::fill(host, host + n, T(1));
  const T a = T(0.999);
  T result = 0;
  auto once = [&] {
    switch (info.op) {
      case Op::kMemset: device->memset(x, 0, 0, bytes); break;
      case Op::kHostToDevice: device->copy_to_device(host, x, 0, bytes); break;
      case Op::kDeviceToHost: device->copy_to_host(x, 0, host, bytes); break;
      case Op::kDeviceToDevice: device->copy_device(x, 0, y, 0, bytes); break;
      case Op::kAxpy: device->axpy(n, a, x, 0, y, 0); break;
      case Op::kDot: device->dot(n, x, 0, y, 0, &result); break;
      case Op::kAsum: device->asum(n, x, 0, &result); break;
      case Op::kScal: device->scal(n, T(-1), x, 0); break;
    }
    if (!host_memory) device->synchronize();  // a no-op on host-memory devices
  };
  once();  // warm-up: JIT, first touch
  for (auto _ : state) {
    once();
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(state.iterations() * bytes_moved(info.pattern, n, sizeof(T)));
  device->release(x);
  device->release(y);
  if (pinned) device->release_host(pinned);
}

template <typename T>
void register_type(const std::string& id, const std::vector<std::int64_t>& sizes) {
  for (const OpInfo& info : kOps) {
    for (std::int64_t n : sizes) {
      reg(name("device", id, info.name, dtype_name<T>(), n),
                                   [id, info, n](benchmark::State& s) { run<T>(s, id, info, n); });
    }
  }
}

}  // namespace

void register_device_ops(const std::string& id, const std::vector<std::int64_t>& sizes) {
  register_type<float>(id, sizes);
  register_type<double>(id, sizes);
}

void register_device() {
  for (const std::string& id : available_devices()) register_device_ops(id, sizes());
}

}  // namespace blobrt::bench
