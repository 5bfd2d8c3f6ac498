// Blob-level costs on every device: first touch, Update, asum/sumsq/scale, CopyFrom, a
// head round trip (with the bytes the core actually copied), the Caffe anchor rows at
// 16 Mi floats (median of 5), and the resident memory a touched blob costs.
#include <fstream>
#include <string>
#include <unistd.h>

#include "bench_common.hpp"
#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::bench {
namespace {

template <typename T>
void fill(Blob<T>& blob) {
  T* data = blob.mutable_cpu_data();
  T* diff = blob.mutable_cpu_diff();
  for (std::int64_t i = 0; i < blob.count(); ++i) {
    data[i] = T(1) + T(i % 7) * T(0.125);
    diff[i] = T(i % 3) * T(1e-3);
  }
}

// Puts data's and diff's heads on the device side, where Caffe's GPU mode computes.
template <typename T>
void heads_on_device(Blob<T>& blob) {
  blob.mutable_gpu_data();
  blob.mutable_gpu_diff();
}

template <typename T>
void blob_op(benchmark::State& state, const std::string& id, const std::string& op, std::int64_t n) {
  select_backend(id);
  Device& device = *current_device();
  const bool host_memory = device.description().memory_model == blobrt::MemoryModel::kShared;
  std::vector<int> shape{static_cast<int>(n)};
  if (op == "first_touch") {
    for (auto _ : state) {
      Blob<T> blob(shape);
      benchmark::DoNotOptimize(blob.mutable_cpu_data());
    }
    state.SetBytesProcessed(state.iterations() * bytes_moved(Pattern::kFill, n, sizeof(T)));
    return;
  }
  Blob<T> blob(shape), other(shape);
  fill(blob);
  fill(other);
  heads_on_device(blob);
  heads_on_device(other);
  enum class Kind { kUpdate, kAsum, kSumsq, kScale, kCopyFrom, kRoundTrip };
  // Resolved before the timed loop (a string compare per call would dwarf n = 1).
  const Kind kind = op == "Update" ? Kind::kUpdate
                    : op == "asum_data" ? Kind::kAsum
                    : op == "sumsq_data" ? Kind::kSumsq
                    : op == "scale_data" ? Kind::kScale
                    : op == "CopyFrom" ? Kind::kCopyFrom
                                       : Kind::kRoundTrip;
  const Pattern pattern = kind == Kind::kUpdate     ? Pattern::kTriad
                          : kind == Kind::kScale    ? Pattern::kScale
                          : kind == Kind::kCopyFrom ? Pattern::kCopy
                          : kind == Kind::kRoundTrip ? Pattern::kCopy
                                                     : Pattern::kSum;
  T result = 0;
  auto once = [&] {
    switch (kind) {
      case Kind::kUpdate: blob.Update(); break;
      case Kind::kAsum: result = blob.asum_data(); break;
      case Kind::kSumsq: result = blob.sumsq_data(); break;
      case Kind::kScale: blob.scale_data(T(-1)); break;  // exact: never decays to denormals
      case Kind::kCopyFrom: other.CopyFrom(blob); break;
      case Kind::kRoundTrip:
        blob.mutable_cpu_data();
        blob.gpu_data();
        blob.mutable_gpu_data();
        blob.cpu_data();
        break;
    }
    // Asynchronous devices are timed to completion; on host-memory devices synchronize()
    // is a no-op by definition and is left out of the dispatch-overhead figure.
    if (!host_memory) device.synchronize();
  };
  once();
  reset_transfer_counters();
  for (auto _ : state) {
    once();
    benchmark::DoNotOptimize(result);
  }
  TransferCounters c = transfer_counters();
  state.counters["bytes_copied_per_iter"] =
      static_cast<double>(c.host_to_device + c.device_to_host) / std::max<double>(1, state.iterations());
  state.SetBytesProcessed(state.iterations() * bytes_moved(pattern, n, sizeof(T)));
}

long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// RSS growth per element of a Blob<float> touched on data only, then on data and diff.
void memory_cost(benchmark::State& state, const std::string& id, std::int64_t n) {
  select_backend(id);
  double data_only = 0, both = 0;
  for (auto _ : state) {
    long before = resident_bytes();
    Blob<float> blob(std::vector<int>{static_cast<int>(n)});
    blob.mutable_cpu_data();
    blob.mutable_gpu_data();  // a device-side touch must not add a hidden mirror
    blob.cpu_data();
    long after_data = resident_bytes();
    blob.mutable_cpu_diff();
    long after_diff = resident_bytes();
    data_only = static_cast<double>(after_data - before) / n;
    both = static_cast<double>(after_diff - before) / n;
  }
  state.counters["rss_bytes_per_element_data"] = data_only;
  state.counters["rss_bytes_per_element_data_diff"] = both;
}

}  // namespace

const char* const kBlobOps[] = {"first_touch", "Update", "asum_data", "sumsq_data", "scale_data", "CopyFrom",
                                "round_trip"};

void register_blob_ops(const std::string& id, const std::vector<std::int64_t>& sizes) {
  for (const char* op : kBlobOps) {
    const std::string o = op;
    for (std::int64_t n : sizes) {
      reg(name("blob", id, o, "float", n), [id, o, n](benchmark::State& s) { blob_op<float>(s, id, o, n); });
    }
  }
}

void register_blob() {
  const std::int64_t anchor = smoke() ? (1 << 12) : (1 << 24);  // 16 Mi floats = 64 MiB
  for (const std::string& id : available_devices()) {
    register_blob_ops(id, sizes());
    for (const char* op : kBlobOps) {
      const std::string o = op;
      // The rows of the Caffe anchor table: median of 5 at 16 Mi floats.
      reg(name("anchor", id, o, "float", anchor),
          [id, o, anchor](benchmark::State& s) { blob_op<float>(s, id, o, anchor); })
          ->Repetitions(smoke() ? 1 : 5)
          ->ReportAggregatesOnly(!smoke())
          ->Unit(benchmark::kMillisecond);
    }
    reg(name("memory", id, "rss", "float", anchor), [id, anchor](benchmark::State& s) { memory_cost(s, id, anchor); })
        ->Iterations(1);
  }
}

}  // namespace blobrt::bench
