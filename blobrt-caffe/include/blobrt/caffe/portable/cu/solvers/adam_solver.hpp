// Caffe's src/caffe/solvers/adam_solver.cu in the portable build: the update as blobrt's
// operations on the calling thread's device, in the order of operations of the solver's
// CPU path (the same values as CPU mode).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_ADAM_SOLVER_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_ADAM_SOLVER_HPP

#include <blobrt/caffe/portable/scratch.hpp>

#include "caffe/util/math_functions.hpp"

namespace caffe {

// m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2;
// g = corrected_local_rate * m / (sqrt(v) + eps_hat)
template <typename Dtype>
void adam_update_gpu(int N, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2, Dtype eps_hat,
                     Dtype corrected_local_rate) {
  Dtype* t = blobrt_caffe_portable::scratch<Dtype>(0, N);
  caffe_gpu_axpby(N, Dtype(1) - beta1, g, beta1, m);
  caffe_gpu_mul(N, g, g, t);
  caffe_gpu_axpby(N, Dtype(1) - beta2, t, beta2, v);
  caffe_gpu_powx(N, v, Dtype(0.5), t);
  caffe_gpu_add_scalar(N, eps_hat, t);
  caffe_gpu_div(N, m, t, t);
  caffe_gpu_scale(N, corrected_local_rate, t, g);
}
template void adam_update_gpu<float>(int, float*, float*, float*, float, float, float, float);
template void adam_update_gpu<double>(int, double*, double*, double*, double, double, double, double);

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_ADAM_SOLVER_HPP
