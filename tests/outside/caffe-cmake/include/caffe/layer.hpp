// Caffe's Layer, as far as its GPU methods go (include/caffe/layer.hpp): Forward and
// Backward call the _gpu methods in GPU mode, whose default is the CPU code.
#ifndef CAFFE_LAYER_H_
#define CAFFE_LAYER_H_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"

namespace caffe {

template <typename Dtype>
class Layer {
 public:
  virtual ~Layer() {}
  void Forward(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
    if (Caffe::mode() == Caffe::GPU) {
      Forward_gpu(bottom, top);
    } else {
      Forward_cpu(bottom, top);
    }
  }
  void Backward(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,
                const vector<Blob<Dtype>*>& bottom) {
    if (Caffe::mode() == Caffe::GPU) {
      Backward_gpu(top, propagate_down, bottom);
    } else {
      Backward_cpu(top, propagate_down, bottom);
    }
  }

 protected:
  virtual void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) = 0;
  virtual void Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
    Forward_cpu(bottom, top);
  }
  virtual void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,
                            const vector<Blob<Dtype>*>& bottom) = 0;
  virtual void Backward_gpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,
                            const vector<Blob<Dtype>*>& bottom) {
    Backward_cpu(top, propagate_down, bottom);
  }
};

}  // namespace caffe

#endif  // CAFFE_LAYER_H_
