// As Caffe's include/caffe/util/gpu_util.cuh: device code that only nvcc reads (the
// portable build's generated sources leave this include out; the Caffe-layers CUDA plugin
// compiles it).
#ifndef CAFFE_UTIL_GPU_UTIL_H_
#define CAFFE_UTIL_GPU_UTIL_H_

namespace caffe {

template <typename Dtype>
inline __device__ Dtype caffe_gpu_square(Dtype x) {
  return x * x;
}

}  // namespace caffe

#endif  // CAFFE_UTIL_GPU_UTIL_H_
