// Caffe's LeNet-style MLP (InnerProduct 784->500, ReLU, InnerProduct 500->10,
// SoftmaxWithLoss) written in Caffe's Layer style on <blobrt/caffe_compat.hpp>
// (examples/caffe_style/layers.hpp), trained with SGD on synthetic 28x28 "digits", on any
// backend, and data-parallel with libblobrt-dist:
//
//   mpirun -np 4 blobrt-caffe-mlp --batch 8     # 4 ranks x 8 samples per step
//   mpirun -np 1 blobrt-caffe-mlp --batch 32    # the same global batch in one process
// reach the same weights (to float tolerance): each rank's gradient is its shard's mean,
// and the allreduce's mean of the shard means is the global batch's mean.
//
// Options (--help): --steps N (60), --batch B per rank (8), --lr R (0.1), --gpu (Caffe::GPU
//          mode: the InnerProduct layers run on the active device), --out FILE (rank 0 writes
//          a sample of the final weights there, one per line).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "blobrt/caffe_compat.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/runtime.hpp"
#include "caffe_style/layers.hpp"
#include "sgd_command_line.hpp"

namespace {

using caffe::Blob;
using caffe::Caffe;
using std::vector;

struct Args {
  int steps = 60, batch = 8;
  float lr = 0.1f;
  bool gpu = false;
  std::string out;
};

CLI::App& command_line(Args& a) {
  static CLI::App app{"Caffe's LeNet MLP in Caffe's Layer style, trained with SGD on synthetic digits, "
                      "data-parallel with libblobrt-dist (mpirun -np N blobrt-caffe-mlp ...)",
                      "blobrt-caffe-mlp"};
  sgd_example::add_sgd_options(app, a.steps, a.batch, a.lr, a.out,
                               "rank 0 writes a sample of the final weights there, one per line");
  app.add_flag("--gpu", a.gpu, "Caffe::GPU mode: the InnerProduct layers run on the active device");
  return app;
}

// Sample s, the same on every rank: class s % 10, an image of 784 pixels that lights the
// class's own band of rows, plus noise.
void sample(std::uint64_t s, float* image, float* label) {
  std::mt19937_64 gen(s * 0x9E3779B97F4A7C15ull + 7);
  std::uniform_real_distribution<float> noise(0.f, 0.3f);
  const int digit = static_cast<int>(s % 10);
  for (int p = 0; p < 784; ++p) image[p] = noise(gen) + ((p / 28) / 3 == digit ? 0.7f : 0.f);
  *label = static_cast<float>(digit);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (std::optional<int> status = sgd_example::parse_before_mpi(command_line(args), argc, argv)) return *status;
  blobrt::dist::MpiSession mpi(&argc, &argv);
  try {
    blobrt::dist::Communicator comm;
    Caffe::set_solver_count(comm.size());
    Caffe::set_solver_rank(comm.rank());
    Caffe::set_mode(args.gpu ? Caffe::GPU : Caffe::CPU);
    Caffe::set_random_seed(1701);  // the same initial weights everywhere, as Caffe's fillers

    caffe_style::InnerProductLayer<float> ip1(500, 784, 0.05f), ip2(10, 500, 0.05f);
    caffe_style::ReLULayer<float> relu;
    caffe_style::SoftmaxWithLossLayer<float> loss_layer;
    Blob<float> data(vector<int>{args.batch, 784}), label(vector<int>{args.batch});
    Blob<float> h1, h1r, scores, loss;
    vector<blobrt::dist::ParamRef> params;
    for (auto* layer : {&ip1, &ip2}) {
      for (auto& blob : layer->blobs()) params.push_back(blob.get());
    }
    comm.broadcast_data(params, 0);

    float last_loss = 0;
    for (int step = 0; step < args.steps; ++step) {
      const std::uint64_t first = (static_cast<std::uint64_t>(step) * comm.size() + comm.rank()) * args.batch;
      for (int i = 0; i < args.batch; ++i) {
        sample(first + i, data.mutable_cpu_data() + data.offset(i), label.mutable_cpu_data() + i);
      }
      ip1.Forward({&data}, {&h1});
      relu.Forward({&h1}, {&h1r});
      ip2.Forward({&h1r}, {&scores});
      loss_layer.Forward({&scores, &label}, {&loss});
      last_loss = loss.cpu_data()[0];

      for (auto* layer : {&ip1, &ip2}) {
        for (auto& blob : layer->blobs()) blob->scale_diff(0);
      }
      loss.mutable_cpu_diff()[0] = 1;  // loss weight
      loss_layer.Backward({&loss}, {true, false}, {&scores, &label});
      ip2.Backward({&scores}, {true}, {&h1r});
      relu.Backward({&h1r}, {true}, {&h1});
      ip1.Backward({&h1}, {false}, {&data});

      comm.allreduce_diffs(params, blobrt::dist::Reduction::kMean);
      for (auto* layer : {&ip1, &ip2}) {
        for (auto& blob : layer->blobs()) {
          blob->scale_diff(args.lr);
          blob->Update();
        }
      }
    }
    if (Caffe::root_solver()) {
      std::printf("%d ranks on %s (%s mode): loss %.5f after %d steps of %d samples\n", comm.size(),
                  blobrt::current_device_id().c_str(), args.gpu ? "GPU" : "CPU", last_loss, args.steps,
                  args.batch * comm.size());
      if (!args.out.empty()) {
        std::ofstream out(args.out);
        out.precision(9);
        out << last_loss << "\n";
        for (auto* layer : {&ip1, &ip2}) {
          const Blob<float>& w = *layer->blobs()[0];
          for (int i = 0; i < w.count(); i += 97) out << w.cpu_data()[i] << "\n";
          const Blob<float>& b = *layer->blobs()[1];
          for (int i = 0; i < b.count(); ++i) out << b.cpu_data()[i] << "\n";
        }
      }
    }
  } catch (const std::exception& e) {
    // One rank's error must end the job, not leave the others waiting in a collective.
    std::fprintf(stderr, "blobrt-caffe-mlp: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
