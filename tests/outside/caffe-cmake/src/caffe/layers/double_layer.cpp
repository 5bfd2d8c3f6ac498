#include <vector>

#include "caffe/layers/double_layer.hpp"
#include "caffe/util/math_functions.hpp"

namespace caffe {

template <typename Dtype>
void DoubleLayer<Dtype>::Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
  top[0]->ReshapeLike(*bottom[0]);
  caffe_cpu_scale(bottom[0]->count(), Dtype(2), bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

#ifdef CPU_ONLY
STUB_GPU_FORWARD(DoubleLayer, Forward);
#endif

INSTANTIATE_CLASS(DoubleLayer);

}  // namespace caffe
