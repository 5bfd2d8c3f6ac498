// blobrt::caffe::SolverDataParallel when Step() throws mid-backward on every rank, at a
// different layer on each (issue 48), and the program catches it and steps on, under
// `mpirun -np 2` (tests/dist/meson.build) with the Caffe-style Net and SGD solver of
// examples/caffe_style (Caffe's order of calls: ClearParamDiffs, on_start, backward with
// the after-backward hooks, on_gradients_ready).
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "blobrt/caffe/solver_data_parallel.hpp"
#include "caffe_style/net_solver.hpp"

namespace {

using caffe::Blob;

// One parameter of 1024 floats (4 KiB: a bucket alone) to whose diff backward adds
// rank + 1, as Caffe's layers accumulate; Backward throws where `*fail_at` is its index.
class GradLayer : public caffe_style::Layer<float> {
 public:
  GradLayer(int index, const int* fail_at) : index_(index), fail_at_(fail_at) {
    blobs_.push_back(std::make_shared<Blob<float>>(std::vector<int>{1024}));
  }
  void Reshape(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>& top) override {
    top[0]->Reshape(std::vector<int>{1});
  }

 protected:
  void Forward_cpu(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>& top) override {
    top[0]->mutable_cpu_data()[0] = 0;
  }
  void Backward_cpu(const std::vector<Blob<float>*>&, const std::vector<bool>&,
                    const std::vector<Blob<float>*>&) override {
    if (*fail_at_ == index_) throw std::runtime_error("layer " + std::to_string(index_) + " failed");
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float* diff = blobs_[0]->mutable_cpu_diff();
    for (int i = 0; i < blobs_[0]->count(); ++i) diff[i] += static_cast<float>(rank + 1);
  }

 private:
  int index_;
  const int* fail_at_;
};

// Guards against a hang and a wrong gradient after a failed Step(): rank 0 throws at layer
// 1 with four buckets queued (its communication thread inside the fifth's collective),
// rank 1 at layer 5 with none. The next Step() must abandon that iteration on every rank
// (completing its buckets) rather than raise "call finish() first" on one while the other
// waits, and its diffs must be exactly the ranks' mean, nothing of the abandoned iteration
// left in them.
TEST(SolverDataParallelAbandon, AStepThatThrewOnEveryRankLeavesTheNextStepRight) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int fail_at = -1;
  auto net = std::make_shared<caffe_style::Net<float>>();
  std::vector<std::unique_ptr<Blob<float>>> tops;
  tops.push_back(std::make_unique<Blob<float>>(std::vector<int>{1}));
  for (int i = 0; i < 6; ++i) {
    tops.push_back(std::make_unique<Blob<float>>(std::vector<int>{1}));
    net->add_layer(std::make_shared<GradLayer>(i, &fail_at), {tops[i].get()}, {tops[i + 1].get()}, {false});
  }
  caffe_style::SolverParameter param;
  param.base_lr = 1;
  caffe_style::SGDSolver<float> solver(net, param);
  blobrt::dist::LayerwiseOptions options;
  options.bucket_bytes = 4096;
  blobrt::caffe::SolverDataParallel<caffe_style::SGDSolver<float>> parallel(&solver, options);

  fail_at = rank == 0 ? 1 : 5;
  EXPECT_THROW(solver.Step(1), std::runtime_error);
  fail_at = -1;
  solver.Step(1);
  const float mean = static_cast<float>(size + 1) / 2;
  for (std::size_t i = 0; i < net->learnable_params().size(); ++i) {
    const Blob<float>* blob = net->learnable_params()[i];
    int wrong = 0;
    for (int k = 0; k < blob->count(); ++k) wrong += blob->cpu_diff()[k] != mean;
    EXPECT_EQ(wrong, 0) << "rank " << rank << ", layer " << i << ": diff[0] = " << blob->cpu_diff()[0]
                        << ", the ranks' mean is " << mean;
  }
}

}  // namespace
