// Caffe's src/caffe/solvers/rmsprop_solver.cu in the portable build: the update as blobrt's
// operations on the calling thread's device, in the order of operations of the solver's
// CPU path (the same values as CPU mode).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_RMSPROP_SOLVER_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_RMSPROP_SOLVER_HPP

#include <blobrt/caffe/portable/scratch.hpp>

#include "caffe/util/math_functions.hpp"

namespace caffe {

// h = rms_decay * h + (1 - rms_decay) * g^2; g = local_rate * g / (sqrt(h) + delta)
template <typename Dtype>
void rmsprop_update_gpu(int N, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta, Dtype local_rate) {
  Dtype* t = blobrt_caffe_portable::scratch<Dtype>(0, N);
  caffe_gpu_powx(N, g, Dtype(2), t);
  caffe_gpu_axpby(N, Dtype(1) - rms_decay, t, rms_decay, h);
  caffe_gpu_powx(N, h, Dtype(0.5), t);
  caffe_gpu_add_scalar(N, delta, t);
  caffe_gpu_div(N, g, t, t);
  caffe_gpu_scale(N, local_rate, t, g);
}
template void rmsprop_update_gpu<float>(int, float*, float*, float, float, float);
template void rmsprop_update_gpu<double>(int, double*, double*, double, double, double);

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_RMSPROP_SOLVER_HPP
