#include <vector>

#include "caffe/layers/square_layer.hpp"
#include "caffe/util/gpu_util.cuh"

namespace caffe {

template <typename Dtype>
__global__ void SquareForward(const int n, const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = caffe_gpu_square(in[index]); }
}

template <typename Dtype>
void SquareLayer<Dtype>::Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
  top[0]->ReshapeLike(*bottom[0]);
  const int count = bottom[0]->count();
  SquareForward<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(count, bottom[0]->gpu_data(),
                                                                           top[0]->mutable_gpu_data());
}

template <typename Dtype>
__global__ void SquareBackward(const int n, const Dtype* in, const Dtype* top_diff, Dtype* diff) {
  CUDA_KERNEL_LOOP(index, n) { diff[index] = 2 * in[index] * top_diff[index]; }
}

template <typename Dtype>
void SquareLayer<Dtype>::Backward_gpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,
                                      const vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  SquareBackward<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_LAYER_GPU_FUNCS(SquareLayer);

}  // namespace caffe
