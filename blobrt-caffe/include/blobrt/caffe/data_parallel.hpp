// The one line that makes a Caffe program's training data-parallel across the ranks of an
// MPI job (docs/dist.md, "Caffe across ranks"):
//
//   #include <blobrt/caffe/data_parallel.hpp>
//   ...
//   blobrt::caffe::DataParallel data_parallel;   // added before the solver is made
//   shared_ptr<caffe::Solver<float> > solver(caffe::SolverRegistry<float>::CreateSolver(param));
//   solver->Solve();
//
//   mpirun -np 4 ./train ...                     # or srun, or MPICH's mpiexec
//
// From then on every solver of Caffe's types (SGD, Nesterov, AdaGrad, RMSProp, AdaDelta,
// Adam) made through SolverRegistry (caffe train, pycaffe's get_solver) trains with the
// others ranks' solvers: rank 0's weights broadcast before the first iteration, each
// layer's diffs averaged across ranks as backward produces them, the update as Caffe's
// multi-GPU training does it. Caffe::solver_count()/solver_rank() are the job's, so
// Caffe's data layers read disjoint shares; only rank 0 displays, tests and snapshots
// (Caffe's root solver), and Solve() on the other ranks steps as Caffe's NCCL workers do.
// The effective batch is the ranks' sum of batch sizes.
//
// Needs Caffe's headers (the program's) and links libblobrt-dist beside blobrt-caffe.
#ifndef BLOBRT_CAFFE_DATA_PARALLEL_HPP
#define BLOBRT_CAFFE_DATA_PARALLEL_HPP

#include <map>
#include <string>
#include <vector>

#include "blobrt/caffe/solver_data_parallel.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/error.hpp"
#include "caffe/common.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver.hpp"
#include "caffe/solver_factory.hpp"

namespace blobrt::caffe {

namespace data_parallel_detail {

// Caffe's solver `Solver<Dtype>` (SGDSolver<float>, ...), attached to the job when made.
template <template <typename> class Solver, typename Dtype>
class ParallelSolver : public Solver<Dtype> {
  using Base = Solver<Dtype>;

 public:
  explicit ParallelSolver(const ::caffe::SolverParameter& param) : Base(param), parallel_(this) {}
  ~ParallelSolver() override {
    const auto& t = parallel_.totals();
    if (parallel_.rank() == 0 && t.iterations > 0 && parallel_.size() == 1) {
      log_message(LogLevel::kInfo, "caffe data-parallel: ", t.iterations, " iterations on 1 rank; backward ",
                  t.backward_seconds, " s, nothing to reduce");
    } else if (parallel_.rank() == 0 && t.iterations > 0) {
      log_message(LogLevel::kInfo, "caffe data-parallel: ", t.iterations, " iterations on ", parallel_.size(),
                  " ranks; backward ", t.backward_seconds, " s, reduction ", t.reduce_seconds, " s, of which ",
                  100 * t.hidden_fraction(), "% hidden behind backward");
    }
  }

  using Base::Solve;
  // Rank 0 solves (tests, displays, snapshots); the others step alongside it, as the
  // workers of Caffe's NCCL::Run do.
  void Solve(const char* resume_file = nullptr) override {
    if (::caffe::Caffe::root_solver()) return Base::Solve(resume_file);
    if (resume_file) this->Restore(resume_file);
    this->Step(this->param().max_iter() - this->iter());
  }

  const SolverDataParallel<::caffe::Solver<Dtype>>& data_parallel() const { return parallel_; }

 private:
  SolverDataParallel<::caffe::Solver<Dtype>> parallel_;
};

template <template <typename> class Solver, typename Dtype>
::caffe::Solver<Dtype>* create(const ::caffe::SolverParameter& param) {
  return new ParallelSolver<Solver, Dtype>(param);
}

// A solver type that is not Caffe's own: refused, since it would train unsynchronised.
template <typename Dtype>
::caffe::Solver<Dtype>* refuse(const ::caffe::SolverParameter& param) {
  detail::fail("blobrt::caffe::DataParallel: solver type '", param.type(),
               "' is not one of Caffe's (SGD, Nesterov, AdaGrad, RMSProp, AdaDelta, Adam), so it cannot be made "
               "data-parallel here; attach blobrt::caffe::SolverDataParallel<caffe::Solver<Dtype>> to it instead");
}

// Points Caffe's solver registry of `Dtype` at the parallel solvers; gives back what it had.
template <typename Dtype>
class RegistryOverride {
 public:
  using Registry = ::caffe::SolverRegistry<Dtype>;
  RegistryOverride() : saved_(Registry::Registry()) {
    for (auto& [type, creator] : Registry::Registry()) creator = &refuse<Dtype>;
    set("SGD", &create<::caffe::SGDSolver, Dtype>);
    set("Nesterov", &create<::caffe::NesterovSolver, Dtype>);
    set("AdaGrad", &create<::caffe::AdaGradSolver, Dtype>);
    set("RMSProp", &create<::caffe::RMSPropSolver, Dtype>);
    set("AdaDelta", &create<::caffe::AdaDeltaSolver, Dtype>);
    set("Adam", &create<::caffe::AdamSolver, Dtype>);
  }
  ~RegistryOverride() { Registry::Registry() = saved_; }
  RegistryOverride(const RegistryOverride&) = delete;
  RegistryOverride& operator=(const RegistryOverride&) = delete;

 private:
  void set(const std::string& type, typename Registry::Creator creator) {
    auto& registry = Registry::Registry();
    if (registry.count(type)) registry[type] = creator;  // a Caffe that registered it
  }
  typename Registry::CreatorRegistry saved_;
};

}  // namespace data_parallel_detail

class DataParallel {
 public:
  // Joins the MPI job (MPI_Init_thread at MPI_THREAD_SERIALIZED unless the program did),
  // sets this thread's Caffe::solver_count/solver_rank/multiprocess from it, and makes the
  // solvers created while it lives data-parallel. Give argc/argv where the program has them.
  explicit DataParallel(int* argc = nullptr, char*** argv = nullptr)
      : mpi_(argc, argv, MPI_THREAD_SERIALIZED) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    ::caffe::Caffe::set_solver_count(size_);
    ::caffe::Caffe::set_solver_rank(rank_);
    ::caffe::Caffe::set_multiprocess(true);
    log_message(LogLevel::kInfo, "caffe data-parallel: rank ", rank_, " of ", size_);
  }
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  dist::MpiSession mpi_;
  int rank_ = 0;
  int size_ = 1;
  data_parallel_detail::RegistryOverride<float> float_solvers_;
  data_parallel_detail::RegistryOverride<double> double_solvers_;
};

}  // namespace blobrt::caffe

#endif  // BLOBRT_CAFFE_DATA_PARALLEL_HPP
