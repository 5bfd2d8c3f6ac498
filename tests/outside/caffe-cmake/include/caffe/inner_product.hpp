// A Caffe-style layer's header, as in Caffe's include/caffe/layers/.
#ifndef CAFFE_INNER_PRODUCT_HPP_
#define CAFFE_INNER_PRODUCT_HPP_

#include "caffe/blob.hpp"

namespace caffe {

// top = bottom * weight^T, as Caffe's InnerProductLayer::Forward_cpu without bias.
template <typename Dtype>
void InnerProductForward(const Blob<Dtype>& bottom, const Blob<Dtype>& weight, Blob<Dtype>* top);

}  // namespace caffe

#endif  // CAFFE_INNER_PRODUCT_HPP_
