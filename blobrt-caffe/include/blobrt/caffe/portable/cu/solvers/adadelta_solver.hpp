// Caffe's src/caffe/solvers/adadelta_solver.cu in the portable build: the update as blobrt's
// operations on the calling thread's device, in the order of operations of the solver's
// CPU path (the same values as CPU mode).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_ADADELTA_SOLVER_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_ADADELTA_SOLVER_HPP

#include <blobrt/caffe/portable/scratch.hpp>

#include "caffe/util/math_functions.hpp"

namespace caffe {

// h = momentum * h + (1 - momentum) * g^2; g *= sqrt((h2 + delta) / (h + delta));
// h2 = momentum * h2 + (1 - momentum) * g^2; g *= local_rate
template <typename Dtype>
void adadelta_update_gpu(int N, Dtype* g, Dtype* h, Dtype* h2, Dtype momentum, Dtype delta, Dtype local_rate) {
  Dtype* t = blobrt_caffe_portable::scratch<Dtype>(0, N);
  Dtype* u = blobrt_caffe_portable::scratch<Dtype>(1, N);
  caffe_gpu_powx(N, g, Dtype(2), t);
  caffe_gpu_axpby(N, Dtype(1) - momentum, t, momentum, h);
  caffe_copy(N, h, t);
  caffe_gpu_add_scalar(N, delta, t);
  caffe_copy(N, h2, u);
  caffe_gpu_add_scalar(N, delta, u);
  caffe_gpu_div(N, u, t, t);
  caffe_gpu_powx(N, t, Dtype(0.5), t);
  caffe_gpu_mul(N, g, t, g);
  caffe_gpu_powx(N, g, Dtype(2), t);
  caffe_gpu_axpby(N, Dtype(1) - momentum, t, momentum, h2);
  caffe_gpu_scal(N, local_rate, g);
}
template void adadelta_update_gpu<float>(int, float*, float*, float*, float, float, float);
template void adadelta_update_gpu<double>(int, double*, double*, double*, double, double, double);

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_ADADELTA_SOLVER_HPP
