// blobrt-bench-dist: libblobrt-dist's allreduce against the raw MPI call, under mpirun.
//   mpirun -np 4 blobrt-bench-dist [--blobrt_smoke] [Google Benchmark flags]
// Every rank runs every benchmark for the same fixed number of iterations; an iteration's
// time is the slowest rank's (MPI_Allreduce MAX of each rank's time between barriers), and
// rank 0 reports. The parameter list has the shapes of ResNet-50's learnable blobs in
// Caffe (161 blobs, 25,557,032 floats, 97.5 MiB). At the end rank 0 prints the ratios the
// issue asks for, from this run's own numbers.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_cli.hpp"
#include "blobrt/blob.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/dist/layerwise.hpp"
#include "blobrt/runtime.hpp"

namespace {

bool smoke = false;

// ResNet-50 (He et al. 2015, Caffe's deploy prototxt): conv weights without bias, a
// scale and a bias per batch norm, the final fc weight and bias.
std::vector<std::vector<int>> resnet50_shapes() {
  std::vector<std::vector<int>> shapes;
  auto conv_bn = [&](int out, int in, int k) {
    shapes.push_back({out, in, k, k});
    shapes.push_back({out});
    shapes.push_back({out});
  };
  conv_bn(64, 3, 7);
  int in = 64;
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int width = 64 << stage, out = width * 4;
    for (int b = 0; b < blocks[stage]; ++b) {
      if (b == 0) conv_bn(out, in, 1);  // projection shortcut
      conv_bn(width, b == 0 ? in : out, 1);
      conv_bn(width, width, 3);
      conv_bn(out, width, 1);
    }
    in = out;
  }
  shapes.push_back({1000, 2048});
  shapes.push_back({1000});
  return shapes;
}

struct Model {
  std::vector<std::unique_ptr<blobrt::Blob<float>>> blobs;
  std::vector<blobrt::dist::ParamRef> params;
  std::int64_t count = 0;
  Model() {
    for (const auto& shape : resnet50_shapes()) {
      std::vector<int> s = shape;
      if (smoke) s = {static_cast<int>(std::min<std::int64_t>(blobrt::Blob<float>(shape).count(), 64))};
      blobs.push_back(std::make_unique<blobrt::Blob<float>>(s));
      float* d = blobs.back()->mutable_cpu_diff();
      for (std::int64_t i = 0; i < blobs.back()->count(); ++i) d[i] = 1.0f;
      count += blobs.back()->count();
      params.emplace_back(blobs.back().get());
    }
  }
};

Model& model() {
  static Model m;
  return m;
}

// Times one call across ranks: the slowest rank's time, so every rank agrees.
template <typename F>
void timed(benchmark::State& state, F&& f) {
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    f();
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    state.SetIterationTime(slowest);
  }
  state.SetBytesProcessed(state.iterations() * model().count * static_cast<std::int64_t>(sizeof(float)));
  state.counters["blobs"] = static_cast<double>(model().params.size());
}

void raw_single_buffer(benchmark::State& state) {
  std::vector<float> buffer(static_cast<std::size_t>(model().count), 1.0f);
  timed(state, [&] {
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
}

// The same call on one buffer from the active device's allocator (host-memory devices
// only), i.e. the memory blobrt's fused buffer is: separates MPI's speed on that memory
// (e.g. transparent huge pages) from blobrt's own cost.
void raw_device_buffer(benchmark::State& state) {
  const std::shared_ptr<blobrt::Device>& device = blobrt::current_device();
  if (device->description().memory_model != blobrt::MemoryModel::kShared) {
    state.SkipWithError("the active device's memory is not host memory");
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(model().count) * sizeof(float);
  void* buffer = device->allocate(bytes);
  device->memset(buffer, 0, 0, bytes);
  timed(state, [&] {
    MPI_Allreduce(MPI_IN_PLACE, buffer, static_cast<int>(model().count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  device->release(buffer);
}

void naive_per_blob(benchmark::State& state) {
  timed(state, [&] {
    for (auto& b : model().blobs) {
      MPI_Allreduce(MPI_IN_PLACE, b->mutable_cpu_diff(), static_cast<int>(b->count()), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    }
  });
}

void blobrt_allreduce(benchmark::State& state) {
  blobrt::dist::Communicator comm(MPI_COMM_WORLD, blobrt::dist::Options{static_cast<std::size_t>(state.range(0))});
  comm.allreduce_diffs(model().params);  // lays out once, as the first training step does
  timed(state, [&] { comm.allreduce_diffs(model().params); });
  state.counters["collectives"] = comm.last_stats().collectives;
  state.SetLabel(blobrt::current_device_id() + ", " + comm.engine().engine);
}

// A training step on ResNet-50's parameter list, layer by layer (a convolution's weight
// with its batch norm's scale and bias; the classifier's weight and bias): each layer's
// backward is a real computation on the active device, one gemm per parameter writing its
// diff (diff[N x K] = a[N x 8] * b[8 x K], N the blob's first dimension: work in
// proportion to its size), then the diffs are averaged across ranks:
//   backward_only          no reduction (the compute alone);
//   reduce_after_backward  LayerwiseReducer without overlap: every bucket once backward is over;
//   layerwise              LayerwiseReducer on its communication thread, as layers finish.
// Counters: the share of the reduction hidden behind backward and the exposed ms (rank 0's).
struct TrainingNet {
  std::vector<std::unique_ptr<blobrt::Blob<float>>> blobs;
  std::vector<std::vector<blobrt::dist::ParamRef>> layers;
  std::vector<std::pair<blobrt::DeviceBuffer, blobrt::DeviceBuffer>> operands;  // a and b per blob
  std::shared_ptr<blobrt::Device> device = blobrt::current_device();
  static constexpr int kInner = 8;
  TrainingNet() {
    const auto shapes = resnet50_shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      std::vector<int> s = shapes[i];
      if (smoke) s = {static_cast<int>(std::min<std::int64_t>(blobrt::Blob<float>(s).count(), 64))};
      if (i % 3 == 0 || i + 2 == shapes.size()) layers.emplace_back();  // conv+bn triples, then fc's pair
      blobs.push_back(std::make_unique<blobrt::Blob<float>>(s));
      layers.back().emplace_back(blobs.back().get());
      const std::int64_t n = s[0], k = blobs.back()->count() / s[0];
      std::vector<float> a(static_cast<std::size_t>(n * kInner), 0.01f), b(static_cast<std::size_t>(kInner * k), 0.5f);
      auto upload = [&](const std::vector<float>& v) {
        blobrt::DeviceBuffer d = device->allocate(v.size() * sizeof(float));
        device->copy_to_device(v.data(), d, 0, v.size() * sizeof(float));
        return d;
      };
      operands.emplace_back(upload(a), upload(b));
    }
  }
  ~TrainingNet() {
    for (auto& [a, b] : operands) {
      device->release(a);
      device->release(b);
    }
  }
  // Layer `layer`'s backward: its parameters' diffs written on the device.
  void backward(std::size_t layer, std::size_t& blob) {
    for (std::size_t p = 0; p < layers[layer].size(); ++p, ++blob) {
      blobrt::Blob<float>& b = *blobs[blob];
      const std::int64_t n = b.shape(0), k = b.count() / n;
      device->gemm(blobrt::Precision::kFloat32, blobrt::Transpose::kNo, blobrt::Transpose::kNo, n, k, kInner, 1.0,
                   operands[blob].first, 0, operands[blob].second, 0, 0.0, b.mutable_gpu_diff(), 0);
    }
  }
  // One step; with a reducer, each layer reported done as backward passes it.
  void step(blobrt::dist::LayerwiseReducer* reducer) {
    if (reducer) reducer->begin_backward();
    std::vector<std::size_t> first_blob(layers.size() + 1, 0);
    for (std::size_t l = 0; l < layers.size(); ++l) first_blob[l + 1] = first_blob[l] + layers[l].size();
    for (std::size_t l = layers.size(); l-- > 0;) {
      std::size_t blob = first_blob[l];
      backward(l, blob);
      if (reducer) {
        device->synchronize();  // the diffs are final before the reduction reads them
        reducer->layer_done(static_cast<int>(l));
      }
    }
    device->synchronize();
    if (reducer) reducer->finish();
  }
};

void training_step(benchmark::State& state) {
  static TrainingNet net;
  const int mode = static_cast<int>(state.range(0));  // 0 backward only, 1 after backward, 2 layer-wise
  std::unique_ptr<blobrt::dist::LayerwiseReducer> reducer;
  if (mode > 0) {
    blobrt::dist::LayerwiseOptions options;
    options.overlap = mode == 2;
    reducer = std::make_unique<blobrt::dist::LayerwiseReducer>(net.layers, options);
  }
  net.step(reducer.get());  // the first step lays the buckets out and warms up
  double reduce = 0, exposed = 0;
  timed(state, [&] {
    net.step(reducer.get());
    if (reducer) {
      reduce += reducer->last_stats().reduce_seconds;
      exposed += reducer->last_stats().exposed_seconds;
    }
  });
  if (reducer) {
    state.counters["hidden"] = reduce > 0 ? std::clamp(1 - exposed / reduce, 0.0, 1.0) : 1.0;
    state.counters["exposed_ms"] = 1e3 * exposed / static_cast<double>(state.iterations());
    state.counters["buckets"] = reducer->bucket_count();
    state.SetLabel(blobrt::current_device_id() + (reducer->overlaps() ? "" : ", " + reducer->overlap_reason()));
  } else {
    state.SetLabel(blobrt::current_device_id());
  }
}

// Rank 0 keeps each benchmark's mean time for the ratio summary.
class Recorder : public benchmark::ConsoleReporter {
 public:
  // No colour: under mpirun stdout is a pseudo-terminal, and the escapes would reach logs.
  Recorder() : ConsoleReporter(OO_Tabular) {}
  std::map<std::string, double> seconds;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "mean") continue;
      seconds[r.benchmark_name()] = r.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  const blobrt::bench::Driver driver{
      "blobrt-bench-dist",
      "libblobrt-dist's allreduce against the raw MPI call, on ResNet-50's parameters "
      "(mpirun -np N blobrt-bench-dist ...)",
      blobrt::version(), &smoke};
  std::vector<std::string> args;
  // Before MPI starts: a usage error ends every rank with exit 2, without MPI_Abort.
  if (const auto exit_code = blobrt::bench::parse_command_line(argc, argv, driver, args)) return *exit_code;
  blobrt::dist::MpiSession mpi(&argc, &argv, MPI_THREAD_SERIALIZED);  // layerwise's communication thread
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  const int iterations = smoke ? 2 : 10;
  const int repetitions = smoke ? 1 : 3;
  auto setup = [&](benchmark::internal::Benchmark* b) {
    b->UseManualTime()->Iterations(iterations)->Repetitions(repetitions)->Unit(benchmark::kMillisecond);
    if (repetitions > 1) b->ReportAggregatesOnly(true);
  };
  const std::string suffix = "/ranks:" + std::to_string(ranks);
  setup(benchmark::RegisterBenchmark(("dist/raw_mpi_allreduce_one_buffer" + suffix).c_str(), raw_single_buffer));
  setup(benchmark::RegisterBenchmark(("dist/raw_mpi_allreduce_one_device_buffer" + suffix).c_str(), raw_device_buffer));
  setup(benchmark::RegisterBenchmark(("dist/naive_mpi_allreduce_per_blob" + suffix).c_str(), naive_per_blob));
  setup(benchmark::RegisterBenchmark(("dist/blobrt_allreduce_diffs" + suffix).c_str(), blobrt_allreduce)
            ->ArgName("bucket_bytes")
            ->Arg(1 << 20)
            ->Arg(4 << 20)
            ->Arg(25 << 20)
            ->Arg(1 << 30));

  for (const auto& [mode, name] : {std::pair{0, "backward_only"}, {1, "reduce_after_backward"}, {2, "layerwise"}}) {
    setup(benchmark::RegisterBenchmark(("dist/training_step/" + std::string(name) + suffix).c_str(), training_step)
              ->Arg(mode));
  }

  if (const auto names = blobrt::bench::matching(argv[0], args)) {
    if (names->empty()) return rank == 0 ? blobrt::bench::no_match(driver, args) : 1;
    if (rank == 0) {
      blobrt::bench::print_plan(driver, args, *names,
                                std::to_string(iterations) + " iterations per run, each as long as the slowest rank");
    }
  }
  Recorder recorder;
  Silent silent;
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks(&recorder);
  } else {
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  if (rank == 0 && !smoke) {
    auto mean = [&](const std::string& prefix) {
      for (const auto& [name, s] : recorder.seconds) {
        if (name.rfind(prefix, 0) == 0) return s;
      }
      return 0.0;
    };
    const double raw = mean("dist/raw_mpi_allreduce_one_buffer"), naive = mean("dist/naive_mpi_allreduce_per_blob");
    std::printf("\nsummary: %d ranks, %zu blobs, %lld floats, on %s; raw one buffer %.1f ms, naive per blob %.1f ms\n",
                ranks, model().params.size(), static_cast<long long>(model().count), blobrt::current_device_id().c_str(),
                raw, naive);  // the benchmarks report in ms
    for (const char* bucket : {"1048576", "4194304", "26214400", "1073741824"}) {
      const double ours = mean("dist/blobrt_allreduce_diffs" + suffix + "/bucket_bytes:" + bucket);
      if (raw > 0 && naive > 0 && ours > 0) {
        std::printf("summary: bucket %s B: %.1f ms; raw/blobrt %.2f (speed relative to the raw call), naive/blobrt %.2fx\n",
                    bucket, ours, raw / ours, naive / ours);
      }
    }
  }
  benchmark::Shutdown();
  return 0;
}
