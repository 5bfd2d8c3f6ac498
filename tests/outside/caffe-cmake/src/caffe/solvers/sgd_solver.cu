// As Caffe's: the update kernel (its portable form is blobrt-caffe's).
#include "caffe/util/math_functions.hpp"

namespace caffe {

template <typename Dtype>
__global__ void SGDUpdate(int N, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  CUDA_KERNEL_LOOP(i, N) { g[i] = h[i] = momentum * h[i] + local_rate * g[i]; }
}

template <typename Dtype>
void sgd_update_gpu(int N, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  SGDUpdate<Dtype><<<CAFFE_GET_BLOCKS(N), CAFFE_CUDA_NUM_THREADS>>>(N, g, h, momentum, local_rate);
}
template void sgd_update_gpu<float>(int, float*, float*, float, float);
template void sgd_update_gpu<double>(int, double*, double*, double, double);

}  // namespace caffe
