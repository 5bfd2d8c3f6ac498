// Caffe's src/caffe/solvers/nesterov_solver.cu in the portable build: the update as blobrt's
// operations on the calling thread's device, in the order of operations of the solver's
// CPU path (the same values as CPU mode).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_NESTEROV_SOLVER_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_NESTEROV_SOLVER_HPP

#include <blobrt/caffe/portable/scratch.hpp>

#include "caffe/util/math_functions.hpp"

namespace caffe {

// h' = momentum * h + local_rate * g; g = (1 + momentum) * h' - momentum * h
template <typename Dtype>
void nesterov_update_gpu(int N, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  Dtype* update = blobrt_caffe_portable::scratch<Dtype>(0, N);
  caffe_copy(N, h, update);
  caffe_gpu_axpby(N, local_rate, g, momentum, h);
  caffe_gpu_axpby(N, Dtype(1) + momentum, h, -momentum, update);
  caffe_copy(N, update, g);
}
template void nesterov_update_gpu<float>(int, float*, float*, float, float);
template void nesterov_update_gpu<double>(int, double*, double*, double, double);

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_NESTEROV_SOLVER_HPP
