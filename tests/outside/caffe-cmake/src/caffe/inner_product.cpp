// A Caffe-style layer's source: Caffe's headers, Caffe's math on the active backend.
#include "caffe/inner_product.hpp"

#include "caffe/util/math_functions.hpp"

namespace caffe {

template <typename Dtype>
void InnerProductForward(const Blob<Dtype>& bottom, const Blob<Dtype>& weight, Blob<Dtype>* top) {
  const int m = bottom.shape(0), k = bottom.count(1), n = weight.shape(0);
  top->Reshape(m, n, 1, 1);
  caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasTrans, m, n, k, Dtype(1), bottom.cpu_data(), weight.cpu_data(),
                        Dtype(0), top->mutable_cpu_data());
}

template void InnerProductForward<float>(const Blob<float>&, const Blob<float>&, Blob<float>*);
template void InnerProductForward<double>(const Blob<double>&, const Blob<double>&, Blob<double>*);

}  // namespace caffe
