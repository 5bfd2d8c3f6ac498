// A stand-in for Caffe's caffe/sgd_solvers.hpp (caffe/solver.hpp here): Caffe's six solver
// classes by name, each the stand-in Solver (the update rule does not matter to the test).
#ifndef CAFFE_SGD_SOLVERS_HPP_
#define CAFFE_SGD_SOLVERS_HPP_

#include "caffe/solver.hpp"

namespace caffe {

#define BLOBRT_STAND_IN_SOLVER(Name, Base, TypeName)                            \
  template <typename Dtype>                                                     \
  class Name : public Base<Dtype> {                                             \
   public:                                                                      \
    explicit Name(const SolverParameter& param) : Base<Dtype>(param) {}        \
    const char* type() const override { return TypeName; }                      \
  };

BLOBRT_STAND_IN_SOLVER(SGDSolver, Solver, "SGD")
BLOBRT_STAND_IN_SOLVER(NesterovSolver, SGDSolver, "Nesterov")
BLOBRT_STAND_IN_SOLVER(AdaGradSolver, SGDSolver, "AdaGrad")
BLOBRT_STAND_IN_SOLVER(RMSPropSolver, SGDSolver, "RMSProp")
BLOBRT_STAND_IN_SOLVER(AdaDeltaSolver, SGDSolver, "AdaDelta")
BLOBRT_STAND_IN_SOLVER(AdamSolver, SGDSolver, "Adam")

#undef BLOBRT_STAND_IN_SOLVER

}  // namespace caffe

#endif  // CAFFE_SGD_SOLVERS_HPP_
