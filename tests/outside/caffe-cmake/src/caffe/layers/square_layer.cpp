#include <vector>

#include "caffe/layers/square_layer.hpp"

namespace caffe {

template <typename Dtype>
void SquareLayer<Dtype>::Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
  top[0]->ReshapeLike(*bottom[0]);
  const Dtype* in = bottom[0]->cpu_data();
  Dtype* out = top[0]->mutable_cpu_data();
  for (int i = 0; i < bottom[0]->count(); ++i) out[i] = in[i] * in[i];
}

template <typename Dtype>
void SquareLayer<Dtype>::Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,
                                      const vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* in = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* diff = bottom[0]->mutable_cpu_diff();
  for (int i = 0; i < bottom[0]->count(); ++i) diff[i] = 2 * in[i] * top_diff[i];
}

#ifdef CPU_ONLY
STUB_GPU(SquareLayer);
#endif

INSTANTIATE_CLASS(SquareLayer);

}  // namespace caffe
