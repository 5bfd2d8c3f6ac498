// Data-parallel SGD with blobrt Blobs as parameters and libblobrt-dist summing the
// gradients: a linear model y = x.w + b on synthetic data (docs/dist.md).
//
//   mpirun -np 4 blobrt-dp-sgd --batch 16     # 4 ranks x 16 samples per step
//   mpirun -np 1 blobrt-dp-sgd --batch 64     # the same global batch in one process
// reach the same weights (to float tolerance): each rank's gradient is the mean over its
// shard, and the allreduce's mean of the 4 shard means is the mean over the global batch.
//
// Options: --steps N (200), --batch B per rank (16), --lr R (0.05), --features D (32),
//          --out FILE (rank 0 writes the final weights there, one per line).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/runtime.hpp"
#include "sgd_command_line.hpp"

namespace {

struct Args {
  int steps = 200, batch = 16, features = 32;
  double lr = 0.05;
  std::string out;
};

CLI::App& command_line(Args& a) {
  static CLI::App app{"Data-parallel SGD on a linear model, gradients summed by libblobrt-dist "
                      "(mpirun -np N blobrt-dp-sgd ...)",
                      "blobrt-dp-sgd"};
  sgd_example::add_sgd_options(app, a.steps, a.batch, a.lr, a.out, "rank 0 writes the final weights there, one per line");
  app.add_option("--features", a.features, "model size D")->capture_default_str()->check(sgd_example::at_least_one());
  return app;
}

// Sample s of the synthetic data set, the same on every rank: x ~ U(-1, 1)^D and
// y = x . w_true + b_true + noise, with w_true[j] = (j % 5) - 2 and b_true = 0.5.
void sample(std::uint64_t s, int features, std::vector<float>& x, float& y) {
  std::mt19937_64 gen(s * 0x9E3779B97F4A7C15ull + 1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  x.resize(features);
  double t = 0.5;
  for (int j = 0; j < features; ++j) {
    x[j] = u(gen);
    t += x[j] * ((j % 5) - 2.0);
  }
  y = static_cast<float>(t + 0.01 * u(gen));
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (std::optional<int> status = sgd_example::parse_before_mpi(command_line(args), argc, argv)) return *status;
  blobrt::dist::MpiSession mpi(&argc, &argv);
  try {
    blobrt::dist::Communicator comm;
    // The parameters: weights in float, bias in double (a mixed list, one allreduce).
    blobrt::Blob<float> w(std::vector<int>{args.features});
    blobrt::Blob<double> b(std::vector<int>{1});
    const std::vector<blobrt::dist::ParamRef> params{&w, &b};
    comm.broadcast_data(params, 0);  // every rank starts from rank 0's (zero) weights

    std::vector<float> x;
    double loss = 0;
    for (int step = 0; step < args.steps; ++step) {
      // Forward and backward on this rank's shard of the global batch.
      const std::uint64_t first = (static_cast<std::uint64_t>(step) * comm.size() + comm.rank()) * args.batch;
      const float* wd = w.cpu_data();
      const double bd = b.cpu_data()[0];
      std::vector<double> gw(args.features, 0.0);
      double gb = 0;
      loss = 0;
      for (int i = 0; i < args.batch; ++i) {
        float y;
        sample(first + i, args.features, x, y);
        double pred = bd;
        for (int j = 0; j < args.features; ++j) pred += wd[j] * x[j];
        const double err = pred - y;
        loss += 0.5 * err * err / args.batch;
        for (int j = 0; j < args.features; ++j) gw[j] += err * x[j] / args.batch;
        gb += err / args.batch;
      }
      float* dw = w.mutable_cpu_diff();
      for (int j = 0; j < args.features; ++j) dw[j] = static_cast<float>(gw[j]);
      b.mutable_cpu_diff()[0] = gb;

      comm.allreduce_diffs(params, blobrt::dist::Reduction::kMean);  // the global batch's gradient
      w.scale_diff(static_cast<float>(args.lr));
      b.scale_diff(args.lr);
      w.Update();  // data -= diff, on the active device
      b.Update();
    }
    double total_loss = 0;
    MPI_Allreduce(&loss, &total_loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (comm.rank() == 0) {
      std::printf("%d ranks on %s, engine %s: loss %.6g after %d steps of %d samples; b = %.6f, w[0..2] = %.5f %.5f %.5f\n",
                  comm.size(), blobrt::current_device_id().c_str(), comm.engine().engine.c_str(),
                  total_loss / comm.size(), args.steps, args.batch * comm.size(), b.cpu_data()[0], w.cpu_data()[0],
                  w.cpu_data()[1], w.cpu_data()[2]);
      if (!args.out.empty()) {
        std::ofstream out(args.out);
        out.precision(9);
        for (int j = 0; j < args.features; ++j) out << w.cpu_data()[j] << "\n";
        out << b.cpu_data()[0] << "\n";
      }
    }
  } catch (const std::exception& e) {
    // One rank's error must end the job, not leave the others waiting in a collective.
    std::fprintf(stderr, "blobrt-dp-sgd: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
