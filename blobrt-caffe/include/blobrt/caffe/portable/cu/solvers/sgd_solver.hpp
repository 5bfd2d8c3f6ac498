// Caffe's src/caffe/solvers/sgd_solver.cu in the portable build: the update as blobrt's
// operations on the calling thread's device, in the order of operations of the solver's
// CPU path (the same values as CPU mode).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_SGD_SOLVER_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_SGD_SOLVER_HPP

#include <blobrt/caffe/portable/scratch.hpp>

#include "caffe/util/math_functions.hpp"

namespace caffe {

// g = h = momentum * h + local_rate * g
template <typename Dtype>
void sgd_update_gpu(int N, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  caffe_gpu_axpby(N, local_rate, g, momentum, h);
  caffe_copy(N, h, g);
}
template void sgd_update_gpu<float>(int, float*, float*, float, float);
template void sgd_update_gpu<double>(int, double*, double*, double, double);

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_SGD_SOLVER_HPP
