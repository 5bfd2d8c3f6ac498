// A layer whose .cu has no kernel (as Caffe's Convolution's, InnerProduct's): top = 2 bottom
// by caffe_gpu_scale.
#ifndef CAFFE_DOUBLE_LAYER_HPP_
#define CAFFE_DOUBLE_LAYER_HPP_

#include <vector>

#include "caffe/layer.hpp"

namespace caffe {

template <typename Dtype>
class DoubleLayer : public Layer<Dtype> {
 protected:
  virtual void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top);
  virtual void Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top);
  virtual void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,
                            const vector<Blob<Dtype>*>& bottom) {}
};

}  // namespace caffe

#endif  // CAFFE_DOUBLE_LAYER_HPP_
