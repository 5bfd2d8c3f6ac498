// A stand-in for Caffe's caffe/solver.hpp (with the parts of net.hpp, layer.hpp and the
// generated SolverParameter it needs), written for this test: what
// blobrt/caffe/data_parallel.hpp uses of Caffe's Solver and Net, with Caffe's signatures
// and Caffe's order of calls in Solver::Step and Net::Backward (the callbacks), over a net
// whose layers each hold one parameter blob. Not Caffe's code; BVLC Caffe is not built here.
#ifndef CAFFE_SOLVER_HPP_
#define CAFFE_SOLVER_HPP_

#include <string>
#include <vector>

#include "caffe/common.hpp"

namespace caffe {

// The fields of Caffe's SolverParameter the line reads (caffe.proto's, as accessors).
class SolverParameter {
 public:
  const std::string& type() const { return type_; }
  void set_type(const std::string& value) { type_ = value; }
  int max_iter() const { return max_iter_; }
  void set_max_iter(int value) { max_iter_ = value; }
  int iter_size() const { return iter_size_; }
  bool layer_wise_reduce() const { return true; }

 private:
  std::string type_ = "SGD";
  int max_iter_ = 1;
  int iter_size_ = 1;
};

template <typename Dtype>
class Layer {
 public:
  explicit Layer(Dtype initial) : blobs_{shared_ptr<Blob<Dtype> >(new Blob<Dtype>(vector<int>{2}))} {
    Dtype* data = blobs_[0]->mutable_cpu_data();
    data[0] = data[1] = initial;
  }
  vector<shared_ptr<Blob<Dtype> > >& blobs() { return blobs_; }

 private:
  vector<shared_ptr<Blob<Dtype> > > blobs_;
};

// Layer i's parameter starts at 10·(rank+1) (the ranks differ until rank 0's is
// broadcast); its gradient in backward is (rank+1)·(i+1), so the ranks' mean is known.
template <typename Dtype>
class Net {
 public:
  class Callback {
   protected:
    virtual void run(int layer) = 0;

    template <typename T>
    friend class Net;
  };

  explicit Net(int layers) {
    for (int i = 0; i < layers; ++i) {
      layers_.push_back(shared_ptr<Layer<Dtype> >(new Layer<Dtype>(Dtype(10) * (Caffe::solver_rank() + 1))));
      params_.push_back(layers_.back()->blobs()[0]);
      learnable_params_.push_back(params_.back().get());
    }
  }

  void Backward() {
    for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
      Dtype* diff = layers_[i]->blobs()[0]->mutable_cpu_diff();
      diff[0] = diff[1] = Dtype((Caffe::solver_rank() + 1) * (i + 1));
      for (Callback* callback : after_backward_) callback->run(i);
    }
  }

  const vector<shared_ptr<Layer<Dtype> > >& layers() const { return layers_; }
  const vector<shared_ptr<Blob<Dtype> > >& params() const { return params_; }
  const vector<Blob<Dtype>*>& learnable_params() const { return learnable_params_; }
  void add_after_backward(Callback* value) { after_backward_.push_back(value); }

 private:
  vector<shared_ptr<Layer<Dtype> > > layers_;
  vector<shared_ptr<Blob<Dtype> > > params_;
  vector<Blob<Dtype>*> learnable_params_;
  vector<Callback*> after_backward_;
};

template <typename Dtype>
class Solver {
 public:
  class Callback {
   protected:
    virtual void on_start() = 0;
    virtual void on_gradients_ready() = 0;

    template <typename T>
    friend class Solver;
  };

  explicit Solver(const SolverParameter& param) : param_(param), net_(new Net<Dtype>(3)) {}
  virtual ~Solver() {}

  // Caffe's Solve is for the root solver: it steps to max_iter.
  virtual void Solve(const char* resume_file = NULL) {
    if (resume_file) Restore(resume_file);
    Step(param_.max_iter() - iter_);
  }
  void Step(int iters) {
    for (int n = 0; n < iters; ++n) {
      for (Callback* callback : callbacks_) callback->on_start();
      net_->Backward();
      for (Callback* callback : callbacks_) callback->on_gradients_ready();
      for (Blob<Dtype>* blob : net_->learnable_params()) blob->Update();  // data -= diff
      ++iter_;
    }
  }
  void Restore(const char*) {}

  const SolverParameter& param() const { return param_; }
  shared_ptr<Net<Dtype> > net() { return net_; }
  int iter() const { return iter_; }
  void add_callback(Callback* value) { callbacks_.push_back(value); }
  virtual const char* type() const { return ""; }

 private:
  SolverParameter param_;
  shared_ptr<Net<Dtype> > net_;
  vector<Callback*> callbacks_;
  int iter_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_SOLVER_HPP_
