// One training step of Caffe's LeNet MLP (InnerProduct 784->500, ReLU, InnerProduct
// 500->10, SoftmaxWithLoss, batch 64) written on the compat API with the project's
// Caffe-style layers (examples/caffe_style/layers.hpp): forward, clearing the parameter
// diffs (Caffe's Net::ClearParamDiffs), backward, then SGD (diff *= lr; Blob::Update).
//   caffe_mlp/DEVICE:0/step_cpu/float/64  Caffe::CPU on every host-memory device
//   caffe_mlp/opencl:0/step_gpu/float/64  Caffe::GPU on OpenCL (the InnerProduct layers and
//                                         the update on the device, ReLU and the loss on
//                                         the host, as the layers are written)
// In CPU mode caffe_cpu_* run on blobrt::host_math_device() (BLIS where installed) whatever
// the device; the device serves the Blobs' memory and Blob::Update.
// The yardstick is BVLC Caffe's own layers built with OpenBLAS, timed the same way
// (docs/performance.md, "The MLP step against BVLC Caffe").
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "blobrt/caffe_compat.hpp"
#include "blobrt/runtime.hpp"
#include "caffe_style/layers.hpp"

namespace blobrt::bench {
namespace {

using caffe::Blob;
using caffe::Caffe;

void mlp_step(benchmark::State& state, const std::string& id, bool gpu, int batch) {
  select_backend(id);
  Caffe::set_mode(gpu ? Caffe::GPU : Caffe::CPU);
  Caffe::set_random_seed(1701);
  {
    caffe_style::InnerProductLayer<float> ip1(500, 784, 0.05f), ip2(10, 500, 0.05f);
    caffe_style::ReLULayer<float> relu;
    caffe_style::SoftmaxWithLossLayer<float> loss_layer;
    Blob<float> data(std::vector<int>{batch, 784}), label(std::vector<int>{batch});
    Blob<float> h1, h1r, scores, loss;
    caffe::caffe_rng_uniform<float>(data.count(), 0.f, 1.f, data.mutable_cpu_data());
    for (int i = 0; i < batch; ++i) label.mutable_cpu_data()[i] = static_cast<float>(i % 10);
    std::vector<Blob<float>*> params;
    for (auto* layer : {&ip1, &ip2}) {
      for (auto& blob : layer->blobs()) params.push_back(blob.get());
    }
    const bool host_memory = current_device()->description().memory_model == blobrt::MemoryModel::kShared;
    const float lr = 0.01f;
    auto step = [&] {
      ip1.Forward({&data}, {&h1});
      relu.Forward({&h1}, {&h1r});
      ip2.Forward({&h1r}, {&scores});
      loss_layer.Forward({&scores, &label}, {&loss});
      for (Blob<float>* p : params) p->scale_diff(0);
      loss.mutable_cpu_diff()[0] = 1;  // the loss weight
      loss_layer.Backward({&loss}, {true, false}, {&scores, &label});
      ip2.Backward({&scores}, {true}, {&h1r});
      relu.Backward({&h1r}, {true}, {&h1});
      ip1.Backward({&h1}, {false}, {&data});
      for (Blob<float>* p : params) {
        p->scale_diff(lr);
        p->Update();
      }
      if (!host_memory) current_device()->synchronize();
    };
    step();  // warm-up: first touches, BLIS's packing buffers, OpenCL kernels
    for (auto _ : state) step();
    state.counters["loss"] = loss.cpu_data()[0];
  }
  Caffe::set_mode(Caffe::CPU);
}

}  // namespace

void register_caffe_mlp() {
  const int batch = smoke() ? 8 : 64;
  for (const std::string& id : available_devices()) {
    // Caffe's CPU mode where the device's memory is host memory, its GPU mode elsewhere.
    const bool gpu_mode = open_device(id)->description().memory_model != blobrt::MemoryModel::kShared;
    for (bool gpu : {false, true}) {
      if (gpu != gpu_mode) continue;
      auto* b = reg(name("caffe_mlp", id, gpu ? "step_gpu" : "step_cpu", "float", batch),
                    [id, gpu, batch](benchmark::State& s) { mlp_step(s, id, gpu, batch); })
                    ->Unit(benchmark::kMillisecond);
      if (!smoke()) b->Repetitions(10)->ReportAggregatesOnly(true);
    }
  }
}

}  // namespace blobrt::bench
