// The rest of the stand-in for Caffe's library (libcaffe) beside blobrt's real
// data_parallel_entry.cpp: Caffe's six solver types registered by name, as Caffe's
// REGISTER_SOLVER_CLASS does, plus "Custom", a type that is not Caffe's; and what the
// stand-in pycaffe extension (_caffe.c) calls: Caffe::solver_count()/solver_rank(), and
// a solver made through the registry as pycaffe's get_solver makes it, solved.
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <typeinfo>

#include "caffe/common.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver_factory.hpp"

namespace caffe {
namespace {

template <typename Dtype>
class CustomSolver : public SGDSolver<Dtype> {
 public:
  explicit CustomSolver(const SolverParameter& param) : SGDSolver<Dtype>(param) {}
  const char* type() const override { return "Custom"; }
};

template <template <typename> class SolverClass, typename Dtype>
Solver<Dtype>* make(const SolverParameter& param) {
  return new SolverClass<Dtype>(param);
}

template <typename Dtype>
void register_solvers() {
  SolverRegistry<Dtype>::AddCreator("SGD", &make<SGDSolver, Dtype>);
  SolverRegistry<Dtype>::AddCreator("Nesterov", &make<NesterovSolver, Dtype>);
  SolverRegistry<Dtype>::AddCreator("AdaGrad", &make<AdaGradSolver, Dtype>);
  SolverRegistry<Dtype>::AddCreator("RMSProp", &make<RMSPropSolver, Dtype>);
  SolverRegistry<Dtype>::AddCreator("AdaDelta", &make<AdaDeltaSolver, Dtype>);
  SolverRegistry<Dtype>::AddCreator("Adam", &make<AdamSolver, Dtype>);
  SolverRegistry<Dtype>::AddCreator("Custom", &make<CustomSolver, Dtype>);
}

const bool registered = (register_solvers<float>(), register_solvers<double>(), true);

}  // namespace
}  // namespace caffe

namespace {

void copy_message(const char* message, char* error, std::size_t error_size) {
  if (error_size == 0) return;
  std::strncpy(error, message, error_size - 1);
  error[error_size - 1] = '\0';
}

}  // namespace

extern "C" {

int caffe_stand_in_solver_count(void) { return caffe::Caffe::solver_count(); }
int caffe_stand_in_solver_rank(void) { return caffe::Caffe::solver_rank(); }

// A float solver of `type` from the registry, solved (max_iter 1): 1 when it is one of
// blobrt's data-parallel solvers, 0 when it is the registry's own, -1 with the message
// in `error`. data[i] and diff[i] are layer i's first parameter value and gradient after.
int caffe_stand_in_solve(const char* type, double* data, double* diff, int layers, char* error,
                         std::size_t error_size) {
  try {
    caffe::SolverParameter param;
    param.set_type(type);
    std::unique_ptr<caffe::Solver<float> > solver(caffe::SolverRegistry<float>::CreateSolver(param));
    const bool parallel = std::string(typeid(*solver).name()).find("ParallelSolver") != std::string::npos;
    solver->Solve();
    const auto& net_layers = solver->net()->layers();
    for (int i = 0; i < layers && i < static_cast<int>(net_layers.size()); ++i) {
      data[i] = net_layers[i]->blobs()[0]->cpu_data()[0];
      diff[i] = net_layers[i]->blobs()[0]->cpu_diff()[0];
    }
    return parallel ? 1 : 0;
  } catch (const std::exception& e) {
    copy_message(e.what(), error, error_size);
  }
  return -1;
}

}  // extern "C"
