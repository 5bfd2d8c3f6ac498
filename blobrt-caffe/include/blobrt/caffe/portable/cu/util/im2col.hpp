// Caffe's src/caffe/util/im2col.cu in the portable build: im2col_gpu and col2im_gpu are
// blobrt's im2col/col2im operations on the calling thread's device (its plugin's kernels,
// else the host kernels through copies), in both of Caffe's signatures (with dilation, and
// the older one without it, which Caffe trees before 2016 declare: py-faster-rcnn's); the
// n-d forms over up to three spatial axes are blobrt's im2col_3d/col2im_3d operations (fewer
// axes as leading extents of 1), their geometry read from the device (Caffe hands its shape
// blobs over in device memory: six arrays of at most four ints per call); beyond three axes
// they run the n-d column layout of Caffe's im2col_nd_cpu / col2im_nd_cpu (written here, so a
// tree older than those functions compiles too) on host copies of the operands.
#ifndef BLOBRT_CAFFE_PORTABLE_CU_IM2COL_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_IM2COL_HPP

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <blobrt/caffe/portable/cu/host_copies.hpp>
#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/runtime.hpp>

#include "caffe/util/im2col.hpp"

namespace caffe {

template <typename Dtype>
void im2col_gpu(const Dtype* data_im, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                const int dilation_h, const int dilation_w, Dtype* data_col) {
  blobrt::current_device()->im2col(blobrt_caffe_portable::precision_of<Dtype>(), channels, height, width, kernel_h,
                                   kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, data_im, 0,
                                   data_col, 0);
}

template <typename Dtype>
void col2im_gpu(const Dtype* data_col, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                const int dilation_h, const int dilation_w, Dtype* data_im) {
  blobrt::current_device()->col2im(blobrt_caffe_portable::precision_of<Dtype>(), channels, height, width, kernel_h,
                                   kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, data_col, 0,
                                   data_im, 0);
}

// The signatures of Caffe trees before dilation (2016): dilation 1.
template <typename Dtype>
void im2col_gpu(const Dtype* data_im, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                Dtype* data_col) {
  im2col_gpu(data_im, channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, 1, 1, data_col);
}
template <typename Dtype>
void col2im_gpu(const Dtype* data_col, const int channels, const int height, const int width, const int kernel_h,
                const int kernel_w, const int pad_h, const int pad_w, const int stride_h, const int stride_w,
                Dtype* data_im) {
  col2im_gpu(data_col, channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, 1, 1, data_im);
}

namespace blobrt_portable_im2col {

using blobrt_caffe_portable::to_device;
using blobrt_caffe_portable::to_host;

inline std::size_t product(const std::vector<int>& shape) {
  std::size_t n = 1;
  for (int extent : shape) n *= static_cast<std::size_t>(extent);
  return n;
}

// Runs `nd_cpu` on host copies: the image (or columns) read, the other side written back.
template <typename Dtype, typename NdCpu>
void nd_on_host(const Dtype* input, bool input_is_image, const int num_spatial_axes, const int* im_shape,
                const int* col_shape, Dtype* output, NdCpu nd_cpu) {
  const std::vector<int> im = to_host(im_shape, num_spatial_axes + 1), col = to_host(col_shape, num_spatial_axes + 1);
  const std::size_t in_n = product(input_is_image ? im : col), out_n = product(input_is_image ? col : im);
  std::vector<Dtype> in = to_host(input, in_n), out(out_n);
  nd_cpu(in.data(), im.data(), col.data(), out.data());
  to_device(out, output);
}

// The n-d geometry Caffe hands over in device memory, on the host.
struct NdGeometry {
  NdGeometry(int axes, const int* kernel_shape, const int* pad, const int* stride, const int* dilation)
      : kernel(to_host(kernel_shape, axes)), pad(to_host(pad, axes)), stride(to_host(stride, axes)),
        dilation(to_host(dilation, axes)) {}
  std::vector<int> kernel, pad, stride, dilation;
};

// Caffe's n-d column layout, both ways: row c of the columns is channel c / kernel_size's
// kernel offset c % kernel_size (row-major over the axes), column q the output position q
// (row-major); the image element it reads is at q's position times the stride, less the
// padding, plus the offset times the dilation, or none (0) outside the image. col2im writes
// the image over with zeros and adds the columns back in that order (Caffe's CPU order).
template <typename Dtype>
void nd_columns(bool to_columns, const Dtype* from, int axes, const int* im, const int* col, const NdGeometry& g,
                Dtype* to) {
  std::size_t kernel_size = 1, outputs = 1, image_size = 1;
  for (int i = 0; i < axes; ++i) {
    kernel_size *= static_cast<std::size_t>(g.kernel[i]);
    outputs *= static_cast<std::size_t>(col[i + 1]);
    image_size *= static_cast<std::size_t>(im[i + 1]);
  }
  if (!to_columns) std::fill(to, to + image_size * static_cast<std::size_t>(im[0]), Dtype(0));
  std::vector<int> offset(static_cast<std::size_t>(axes)), position(static_cast<std::size_t>(axes));
  for (std::size_t row = 0; row < static_cast<std::size_t>(col[0]); ++row) {
    std::size_t rest = row % kernel_size;
    for (int i = axes - 1; i >= 0; --i) {
      offset[i] = static_cast<int>(rest % static_cast<std::size_t>(g.kernel[i]));
      rest /= static_cast<std::size_t>(g.kernel[i]);
    }
    const std::size_t channel = row / kernel_size;
    for (std::size_t q = 0; q < outputs; ++q) {
      std::size_t left = q, at = 0;
      bool inside = true;
      for (int i = axes - 1; i >= 0; --i) {
        position[i] = static_cast<int>(left % static_cast<std::size_t>(col[i + 1]));
        left /= static_cast<std::size_t>(col[i + 1]);
      }
      for (int i = 0; i < axes && inside; ++i) {
        const int x = position[i] * g.stride[i] - g.pad[i] + offset[i] * g.dilation[i];
        inside = x >= 0 && x < im[i + 1];
        at = at * static_cast<std::size_t>(im[i + 1]) + static_cast<std::size_t>(inside ? x : 0);
      }
      const std::size_t c = row * outputs + q, e = channel * image_size + at;
      if (to_columns) {
        to[c] = inside ? from[e] : Dtype(0);
      } else if (inside) {
        to[e] += from[c];
      }
    }
  }
}

// The n-d call as blobrt's im2col_3d (ToImage false) or col2im_3d (true) when it has at most
// three spatial axes, the missing leading ones extents of 1; false (nothing done) beyond three.
template <bool ToImage, typename Dtype>
bool nd_on_device(const Dtype* from, int axes, const int* im_shape, const int* col_shape, const NdGeometry& g,
                  Dtype* to) {
  if (axes < 1 || axes > 3) return false;
  const std::vector<int> im = to_host(im_shape, axes + 1), col = to_host(col_shape, axes + 1);
  std::int64_t image[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, pad[3] = {0, 0, 0},
               stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  for (int i = 0; i < axes; ++i) {
    const int a = 3 - axes + i;
    image[a] = im[i + 1];
    out[a] = col[i + 1];
    kernel[a] = g.kernel[i];
    pad[a] = g.pad[i];
    stride[a] = g.stride[i];
    dilation[a] = g.dilation[i];
  }
  const blobrt::Precision precision = blobrt_caffe_portable::precision_of<Dtype>();
  const std::shared_ptr<blobrt::Device>& device = blobrt::current_device();
  // Caffe's channels: the image's first extent (col_shape's first is channels x kernel size).
  if (ToImage) {
    device->col2im_3d(precision, im[0], image[0], image[1], image[2], out[0], out[1], out[2], kernel[0], kernel[1],
                      kernel[2], pad[0], pad[1], pad[2], stride[0], stride[1], stride[2], dilation[0], dilation[1],
                      dilation[2], from, 0, to, 0);
  } else {
    device->im2col_3d(precision, im[0], image[0], image[1], image[2], out[0], out[1], out[2], kernel[0], kernel[1],
                      kernel[2], pad[0], pad[1], pad[2], stride[0], stride[1], stride[2], dilation[0], dilation[1],
                      dilation[2], from, 0, to, 0);
  }
  return true;
}

}  // namespace blobrt_portable_im2col

template <typename Dtype>
void im2col_nd_gpu(const Dtype* data_im, const int num_spatial_axes, const int /*num_kernels*/, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col) {
  const blobrt_portable_im2col::NdGeometry g(num_spatial_axes, kernel_shape, pad, stride, dilation);
  if (blobrt_portable_im2col::nd_on_device<false>(data_im, num_spatial_axes, im_shape, col_shape, g, data_col)) return;
  blobrt_portable_im2col::nd_on_host(
      data_im, true, num_spatial_axes, im_shape, col_shape, data_col,
      [&](const Dtype* in, const int* im, const int* col, Dtype* out) {
        blobrt_portable_im2col::nd_columns(true, in, num_spatial_axes, im, col, g, out);
      });
}

template <typename Dtype>
void col2im_nd_gpu(const Dtype* data_col, const int num_spatial_axes, const int /*im_size*/, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im) {
  const blobrt_portable_im2col::NdGeometry g(num_spatial_axes, kernel_shape, pad, stride, dilation);
  if (blobrt_portable_im2col::nd_on_device<true>(data_col, num_spatial_axes, im_shape, col_shape, g, data_im)) return;
  blobrt_portable_im2col::nd_on_host(
      data_col, false, num_spatial_axes, im_shape, col_shape, data_im,
      [&](const Dtype* in, const int* im, const int* col, Dtype* out) {
        blobrt_portable_im2col::nd_columns(false, in, num_spatial_axes, im, col, g, out);
      });
}

#define BLOBRT_PORTABLE_IM2COL_INSTANTIATE(Dtype)                                                                    \
  template void im2col_gpu<Dtype>(const Dtype*, const int, const int, const int, const int, const int, const int,    \
                                  const int, const int, const int, const int, const int, Dtype*);                    \
  template void col2im_gpu<Dtype>(const Dtype*, const int, const int, const int, const int, const int, const int,    \
                                  const int, const int, const int, const int, const int, Dtype*);                    \
  template void im2col_gpu<Dtype>(const Dtype*, const int, const int, const int, const int, const int, const int,    \
                                  const int, const int, const int, Dtype*);                                          \
  template void col2im_gpu<Dtype>(const Dtype*, const int, const int, const int, const int, const int, const int,    \
                                  const int, const int, const int, Dtype*);                                          \
  template void im2col_nd_gpu<Dtype>(const Dtype*, const int, const int, const int*, const int*, const int*,         \
                                     const int*, const int*, const int*, Dtype*);                                    \
  template void col2im_nd_gpu<Dtype>(const Dtype*, const int, const int, const int*, const int*, const int*,         \
                                     const int*, const int*, const int*, Dtype*);
BLOBRT_PORTABLE_IM2COL_INSTANTIATE(float)
BLOBRT_PORTABLE_IM2COL_INSTANTIATE(double)
#undef BLOBRT_PORTABLE_IM2COL_INSTANTIATE

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_IM2COL_HPP
