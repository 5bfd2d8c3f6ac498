// A stand-in for Caffe's caffe/solver_factory.hpp: the solver registry with Caffe's types
// and members (a leaked map, as Caffe's, so it is usable at exit).
#ifndef CAFFE_SOLVER_FACTORY_H_
#define CAFFE_SOLVER_FACTORY_H_

#include <map>
#include <string>

#include "caffe/common.hpp"
#include "caffe/solver.hpp"

namespace caffe {

template <typename Dtype>
class SolverRegistry {
 public:
  typedef Solver<Dtype>* (*Creator)(const SolverParameter&);
  typedef std::map<string, Creator> CreatorRegistry;

  static CreatorRegistry& Registry() {
    static CreatorRegistry* g_registry_ = new CreatorRegistry();
    return *g_registry_;
  }
  static void AddCreator(const string& type, Creator creator) { Registry()[type] = creator; }
  static Solver<Dtype>* CreateSolver(const SolverParameter& param) {
    CreatorRegistry& registry = Registry();
    if (registry.count(param.type()) != 1) blobrt::detail::fail("Unknown solver type: ", param.type());
    return registry[param.type()](param);
  }

 private:
  SolverRegistry() {}
};

}  // namespace caffe

#endif  // CAFFE_SOLVER_FACTORY_H_
