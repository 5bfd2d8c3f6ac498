#include <vector>

#include "caffe/layers/double_layer.hpp"
#include "caffe/util/math_functions.hpp"

namespace caffe {

template <typename Dtype>
void DoubleLayer<Dtype>::Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
  top[0]->ReshapeLike(*bottom[0]);
  caffe_gpu_scale(bottom[0]->count(), Dtype(2), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

INSTANTIATE_LAYER_GPU_FORWARD(DoubleLayer);

}  // namespace caffe
