// Stand-in for Caffe's caffe/util/im2col.hpp, as far as the portable form of its im2col.cu
// (blobrt/caffe/portable/cu/util/im2col.hpp) reads it: the GPU functions' declarations in
// BVLC's signatures (with dilation), or, with BLOBRT_TEST_CAFFE_2015 defined, a 2015 tree's
// (py-faster-rcnn's: no dilation, no n-d forms). The portable form defines both kinds.
#pragma once

namespace caffe {

#ifdef BLOBRT_TEST_CAFFE_2015
template <typename Dtype>
void im2col_gpu(const Dtype* data_im, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                Dtype* data_col);
template <typename Dtype>
void col2im_gpu(const Dtype* data_col, const int channels, const int height, const int width, const int patch_h,
                const int patch_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                Dtype* data_im);
#else

template <typename Dtype>
void im2col_nd_gpu(const Dtype* data_im, const int num_spatial_axes, const int col_size, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col);
template <typename Dtype>
void im2col_gpu(const Dtype* data_im, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                const int dilation_h, const int dilation_w, Dtype* data_col);
template <typename Dtype>
void col2im_nd_gpu(const Dtype* data_col, const int num_spatial_axes, const int im_size, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im);
template <typename Dtype>
void col2im_gpu(const Dtype* data_col, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                const int dilation_h, const int dilation_w, Dtype* data_im);
#endif

}  // namespace caffe
