// A Caffe solver's training made data-parallel across MPI ranks through its own hooks
// (docs/dist.md, "Caffe across ranks"): parameters broadcast from rank 0 before the first
// iteration, each layer's parameter diffs averaged across ranks as backward produces them
// (the Net's after-backward callbacks, as Caffe's NCCL class does), and finished before
// the update (the Solver's on_gradients_ready). Header-only over Caffe's Solver and Net
// interfaces (Solver<Dtype>::Callback, Net<Dtype>::Callback, add_after_backward, layers(),
// params(), learnable_params()), so it builds with Caffe's own headers and with a
// Caffe-style solver written elsewhere; <blobrt/caffe/data_parallel.hpp> is the one line a
// Caffe program adds.
//
// Links libblobrt-dist (pkg-config blobrt-dist, CMake blobrt::dist); MPI must be
// initialised, at MPI_THREAD_SERIALIZED for the reduction to overlap backward. A parameter
// reshaped after the solver was made is still reduced (the reducer plans its buckets anew);
// a Step() that throws mid-backward leaves no rank waiting (the reducer's abandon path).
#ifndef BLOBRT_CAFFE_SOLVER_DATA_PARALLEL_HPP
#define BLOBRT_CAFFE_SOLVER_DATA_PARALLEL_HPP

#include <algorithm>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "blobrt/dist/layerwise.hpp"
#include "blobrt/log.hpp"
#include "blobrt/syncedmem.hpp"

namespace blobrt::caffe {

// Attaches to `solver` (which must outlive it, and to which nothing else reduces): every
// rank of the job must attach to a solver of the same net. Caffe's
// Caffe::solver_count()/solver_rank() are the program's to set before the solver is made
// (data layers take their share by them); DataParallel (data_parallel.hpp) does.
template <typename Solver>
class SolverDataParallel : public Solver::Callback,
                           public std::remove_reference_t<decltype(*std::declval<Solver&>().net())>::Callback {
  using Net = std::remove_reference_t<decltype(*std::declval<Solver&>().net())>;

 public:
  explicit SolverDataParallel(Solver* solver, dist::LayerwiseOptions options = {})
      : solver_(solver), iter_size_(std::max(1, static_cast<int>(solver->param().iter_size()))) {
    Net& net = *solver->net();
    // Layer-wise only where every parameter belongs to one layer (Caffe's NCCL says the
    // same of shared weights) and the solver asks for it (layer_wise_reduce, default true).
    const bool shared_weights = net.params().size() != net.learnable_params().size();
    layer_wise_ = !shared_weights && layer_wise_reduce(solver->param());
    std::vector<std::vector<dist::ParamRef>> layers;
    if (layer_wise_) {
      for (const auto& layer : net.layers()) {
        layers.emplace_back();
        for (const auto& blob : layer->blobs()) layers.back().emplace_back(blob.get());
      }
    } else {
      layers.emplace_back();  // one list, reduced once backward is over
      for (auto* blob : net.learnable_params()) layers.back().emplace_back(blob);
      options.overlap = false;
    }
    reducer_ = std::make_unique<dist::LayerwiseReducer>(std::move(layers), options);
    if (!layer_wise_) {
      log_message(LogLevel::kInfo, "caffe data-parallel: diffs reduced after backward (",
                  shared_weights ? "the net shares weights between layers" : "layer_wise_reduce is false", ")");
    }
    solver->add_callback(this);
    if (layer_wise_) net.add_after_backward(this);
  }
  SolverDataParallel(const SolverDataParallel&) = delete;
  SolverDataParallel& operator=(const SolverDataParallel&) = delete;

  int rank() const { return reducer_->rank(); }
  int size() const { return reducer_->size(); }
  const dist::LayerwiseReducer& reducer() const { return *reducer_; }

  // Totals over the iterations so far: what docs/dist.md reports.
  struct Totals {
    int iterations = 0;
    double backward_seconds = 0, reduce_seconds = 0, exposed_seconds = 0;
    double hidden_fraction() const {
      return reduce_seconds > 0 ? std::clamp(1 - exposed_seconds / reduce_seconds, 0.0, 1.0) : 1;
    }
  };
  const Totals& totals() const { return totals_; }

 protected:
  void on_start() override {
    if (!broadcast_done_) {
      reducer_->broadcast_data(0);  // every rank starts from rank 0's weights
      broadcast_done_ = true;
    }
    passes_done_ = 0;
    if (reducer_->in_iteration()) {
      // An iteration a previous Step() left by an exception (a layer threw, the program
      // caught it and steps on): its buckets are completed as the other ranks expect, and
      // their finish() says it was abandoned (docs/dist.md, "When an iteration is
      // abandoned"). Those reductions may have written the diffs after Caffe's
      // ClearParamDiffs, which Step() calls before on_start: zero them again.
      reducer_->abandon();
      // Zeroed where each diff's newest copy is (as Caffe's ClearParamDiffs does by mode):
      // a device diff taken to the host here would cross back at the next backward.
      for (auto* blob : solver_->net()->learnable_params()) {
        using Dtype = std::remove_pointer_t<decltype(blob->mutable_gpu_diff())>;
        const auto& memory = blob->diff();
        if (!memory) continue;
        if (memory->head() == blobrt::SyncedMemory::HEAD_AT_GPU) {
          memory->device()->memset(blob->mutable_gpu_diff(), 0, 0, blob->count() * sizeof(Dtype));
        } else {
          auto* diff = blob->mutable_cpu_diff();
          std::fill(diff, diff + blob->count(), 0);
        }
      }
    }
    reducer_->begin_backward();
  }
  // After layer `layer`'s backward; with iter_size > 1, only the last pass's diffs are final.
  void run(int layer) override {
    if (passes_done_ == iter_size_ - 1) reducer_->layer_done(layer);
    if (layer == 0) ++passes_done_;
  }
  void on_gradients_ready() override {
    reducer_->finish();
    const dist::LayerwiseStats& s = reducer_->last_stats();
    ++totals_.iterations;
    totals_.backward_seconds += s.backward_seconds;
    totals_.reduce_seconds += s.reduce_seconds;
    totals_.exposed_seconds += s.exposed_seconds;
  }

 private:
  template <typename Param>
  static auto layer_wise_reduce(const Param& param) -> decltype(param.layer_wise_reduce()) {
    return param.layer_wise_reduce();
  }
  template <typename Param, typename... Ignored>
  static bool layer_wise_reduce(const Param&, Ignored...) {  // a Caffe without the field
    return true;
  }

  Solver* solver_;
  int iter_size_;
  bool layer_wise_ = false;
  bool broadcast_done_ = false;
  int passes_done_ = 0;
  std::unique_ptr<dist::LayerwiseReducer> reducer_;
  Totals totals_;
};

}  // namespace blobrt::caffe

#endif  // BLOBRT_CAFFE_SOLVER_DATA_PARALLEL_HPP
