// Caffe's LeNet-style MLP (InnerProduct 784->500, ReLU, InnerProduct 500->10,
// SoftmaxWithLoss) written in Caffe's Layer, Net and Solver style on
// <blobrt/caffe_compat.hpp> (examples/caffe_style/), trained with SGD on synthetic 28x28
// "digits", on any backend, and data-parallel with one line
// (blobrt::caffe::SolverDataParallel, over libblobrt-dist):
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

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "blobrt/caffe/solver_data_parallel.hpp"
#include "blobrt/caffe_compat.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/runtime.hpp"
#include "caffe_style/layers.hpp"
#include "caffe_style/net_solver.hpp"
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

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (std::optional<int> status = sgd_example::parse_before_mpi(command_line(args), argc, argv)) return *status;
  blobrt::dist::MpiSession mpi(&argc, &argv, MPI_THREAD_SERIALIZED);  // the reduction's own thread
  try {
    Caffe::set_solver_count(world_size());  // as Caffe's data layers take their share
    Caffe::set_solver_rank(world_rank());
    Caffe::set_mode(args.gpu ? Caffe::GPU : Caffe::CPU);
    Caffe::set_random_seed(1701);  // the same initial weights everywhere, as Caffe's fillers

    // LeNet's MLP as a Caffe-style Net: a data "layer" (the input function, taking this
    // rank's share of each global batch), InnerProduct, ReLU, InnerProduct, SoftmaxWithLoss.
    auto net = std::make_shared<caffe_style::Net<float>>();
    auto data = std::make_shared<Blob<float>>(vector<int>{args.batch, 784});
    auto label = std::make_shared<Blob<float>>(vector<int>{args.batch});
    auto h1 = std::make_shared<Blob<float>>(), h1r = std::make_shared<Blob<float>>();
    auto scores = std::make_shared<Blob<float>>(), loss = std::make_shared<Blob<float>>();
    auto ip1 = std::make_shared<caffe_style::InnerProductLayer<float>>(500, 784, 0.05f);
    auto ip2 = std::make_shared<caffe_style::InnerProductLayer<float>>(10, 500, 0.05f);
    net->add_layer(ip1, {data.get()}, {h1.get()}, {false});
    net->add_layer(std::make_shared<caffe_style::ReLULayer<float>>(), {h1.get()}, {h1r.get()}, {true});
    net->add_layer(ip2, {h1r.get()}, {scores.get()}, {true});
    net->add_layer(std::make_shared<caffe_style::SoftmaxWithLossLayer<float>>(), {scores.get(), label.get()},
                   {loss.get()}, {true, false});
    std::uint64_t step = 0;
    net->set_input([&] {
      const std::uint64_t first =
          (step++ * Caffe::solver_count() + Caffe::solver_rank()) * static_cast<std::uint64_t>(args.batch);
      for (int i = 0; i < args.batch; ++i) {
        sample(first + i, data->mutable_cpu_data() + data->offset(i), label->mutable_cpu_data() + i);
      }
    });
    caffe_style::SolverParameter param;
    param.base_lr = args.lr;
    caffe_style::SGDSolver<float> solver(net, param);

    // The one line that makes the training data-parallel (blobrt/caffe/data_parallel.hpp
    // does it for Caffe's own solvers): rank 0's weights broadcast before the first step,
    // each layer's diffs averaged across ranks as backward produces them.
    blobrt::caffe::SolverDataParallel<caffe_style::SGDSolver<float>> data_parallel(&solver);

    solver.Step(args.steps);
    if (Caffe::root_solver()) {
      const auto& totals = data_parallel.totals();
      std::printf("%d ranks on %s (%s mode): loss %.5f after %d steps of %d samples; reduction %.3f s, "
                  "%.0f%% hidden behind backward\n",
                  data_parallel.size(), blobrt::current_device_id().c_str(), args.gpu ? "GPU" : "CPU",
                  solver.last_loss(), args.steps, args.batch * data_parallel.size(), totals.reduce_seconds,
                  100 * totals.hidden_fraction());
      if (!args.out.empty()) {
        std::ofstream out(args.out);
        out.precision(9);
        out << solver.last_loss() << "\n";
        for (auto* layer : {ip1.get(), ip2.get()}) {
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
