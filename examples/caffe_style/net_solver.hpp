// A Net and an SGD Solver in Caffe's shape, over examples/caffe_style/layers.hpp: the
// parts of Caffe's interfaces a training hook sees (Solver<Dtype>::Callback with on_start
// and on_gradients_ready, Net<Dtype>::Callback run by add_after_backward after each layer's
// backward, layers()[i]->blobs(), params(), learnable_params(), param().iter_size(),
// Caffe::root_solver()), with Caffe's order of calls in Solver::Step and
// Net::BackwardFromTo. So blobrt::caffe::SolverDataParallel is built and tested here the
// way it runs on Caffe's own solvers.
#ifndef BLOBRT_EXAMPLES_CAFFE_STYLE_NET_SOLVER_HPP
#define BLOBRT_EXAMPLES_CAFFE_STYLE_NET_SOLVER_HPP

#include <functional>
#include <memory>
#include <vector>

#include "caffe_style/layers.hpp"

namespace caffe_style {

// A chain of layers: layer i reads bottoms[i] and writes tops[i]; the last top is the loss.
template <typename Dtype>
class Net {
 public:
  class Callback {
   protected:
    virtual ~Callback() = default;
    virtual void run(int layer) = 0;
    friend class Net;
  };

  void add_layer(shared_ptr<Layer<Dtype>> layer, vector<Blob<Dtype>*> bottom, vector<Blob<Dtype>*> top,
                 vector<bool> propagate_down) {
    layers_.push_back(std::move(layer));
    bottoms_.push_back(std::move(bottom));
    tops_.push_back(std::move(top));
    propagate_down_.push_back(std::move(propagate_down));
    for (auto& blob : layers_.back()->blobs()) {
      params_.push_back(blob);
      learnable_params_.push_back(blob.get());
    }
  }
  // Called before each forward: fills the input blobs (Caffe's data layer).
  void set_input(std::function<void()> fill) { fill_input_ = std::move(fill); }

  Dtype ForwardBackward() {
    fill_input_();
    for (std::size_t i = 0; i < layers_.size(); ++i) layers_[i]->Forward(bottoms_[i], tops_[i]);
    Blob<Dtype>* loss = tops_.back()[0];
    loss->mutable_cpu_diff()[0] = 1;  // loss weight
    for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
      layers_[i]->Backward(tops_[i], propagate_down_[i], bottoms_[i]);
      for (Callback* c : after_backward_) c->run(i);
    }
    return loss->cpu_data()[0];
  }
  void ClearParamDiffs() {
    for (Blob<Dtype>* blob : learnable_params_) blob->scale_diff(0);
  }

  const vector<shared_ptr<Layer<Dtype>>>& layers() const { return layers_; }
  const vector<shared_ptr<Blob<Dtype>>>& params() const { return params_; }
  const vector<Blob<Dtype>*>& learnable_params() const { return learnable_params_; }
  void add_after_backward(Callback* value) { after_backward_.push_back(value); }

 private:
  vector<shared_ptr<Layer<Dtype>>> layers_;
  vector<vector<Blob<Dtype>*>> bottoms_, tops_;
  vector<vector<bool>> propagate_down_;
  vector<shared_ptr<Blob<Dtype>>> params_;
  vector<Blob<Dtype>*> learnable_params_;
  vector<Callback*> after_backward_;
  std::function<void()> fill_input_ = [] {};
};

struct SolverParameter {
  float base_lr = 0.1f;
  int iter_size = 1;
  bool layer_wise_reduce = true;
};

// Plain SGD (data -= base_lr * diff), with Caffe's Solver::Step order of calls.
template <typename Dtype>
class SGDSolver {
 public:
  struct Param {
    SolverParameter p;
    int iter_size() const { return p.iter_size; }
    bool layer_wise_reduce() const { return p.layer_wise_reduce; }
  };
  class Callback {
   protected:
    virtual ~Callback() = default;
    virtual void on_start() = 0;
    virtual void on_gradients_ready() = 0;
    friend class SGDSolver;
  };

  SGDSolver(shared_ptr<Net<Dtype>> net, SolverParameter param) : net_(std::move(net)), param_{param} {}

  void Step(int iters) {
    for (int it = 0; it < iters; ++it) {
      net_->ClearParamDiffs();
      for (Callback* c : callbacks_) c->on_start();
      Dtype loss = 0;
      for (int i = 0; i < param_.iter_size(); ++i) loss += net_->ForwardBackward();
      last_loss_ = loss / param_.iter_size();
      for (Callback* c : callbacks_) c->on_gradients_ready();
      for (Blob<Dtype>* blob : net_->learnable_params()) {
        blob->scale_diff(static_cast<Dtype>(param_.p.base_lr) / param_.iter_size());
        blob->Update();
      }
      ++iter_;
    }
  }

  shared_ptr<Net<Dtype>> net() { return net_; }
  const Param& param() const { return param_; }
  void add_callback(Callback* value) { callbacks_.push_back(value); }
  int iter() const { return iter_; }
  Dtype last_loss() const { return last_loss_; }

 private:
  shared_ptr<Net<Dtype>> net_;
  Param param_;
  vector<Callback*> callbacks_;
  int iter_ = 0;
  Dtype last_loss_ = 0;
};

}  // namespace caffe_style

#endif  // BLOBRT_EXAMPLES_CAFFE_STYLE_NET_SOLVER_HPP
