// The portable form of util/im2col.cu compiled as a Caffe tree of 2015 compiles it
// (py-faster-rcnn's: its im2col.hpp declares im2col_gpu and col2im_gpu without dilation, and no
// n-d forms), part of test_caffe_forks: those calls, as the tree's convolution layers make
// them, against blobrt's im2col and col2im operations with dilation 1, bit for bit.
#define BLOBRT_TEST_CAFFE_2015
#include "caffe/blob.hpp"
#include "caffe/util/im2col.hpp"

#include <gtest/gtest.h>

#include <vector>

#include <blobrt/caffe/portable/cu/util/im2col.hpp>
#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/runtime.hpp>

namespace {

const bool addressable = blobrt_caffe_portable::request_addressable_handles();

TEST(PortableIm2col2015, TheSignaturesWithoutDilation) {
  ASSERT_TRUE(addressable);
  const int channels = 2, height = 5, width = 4, kh = 3, kw = 2, ph = 1, pw = 1, sh = 2, sw = 1;
  const int rows = channels * kh * kw, columns = ((height + 2 * ph - kh) / sh + 1) * ((width + 2 * pw - kw) / sw + 1);
  caffe::Blob<float> image(1, channels, height, width), col(1, 1, rows, columns), want(1, 1, rows, columns);
  caffe::Blob<float> back(1, channels, height, width), want_back(1, channels, height, width);
  for (int i = 0; i < image.count(); ++i) image.mutable_cpu_data()[i] = 0.5f * static_cast<float>((i * 11) % 7) - 1;
  caffe::im2col_gpu<float>(image.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, col.mutable_gpu_data());
  blobrt::current_device()->im2col(blobrt::Precision::kFloat32, channels, height, width, kh, kw, ph, pw, sh, sw, 1, 1,
                                   image.gpu_data(), 0, want.mutable_gpu_data(), 0);
  for (int i = 0; i < col.count(); ++i) ASSERT_EQ(col.cpu_data()[i], want.cpu_data()[i]) << "column element " << i;
  caffe::col2im_gpu<float>(col.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, back.mutable_gpu_data());
  blobrt::current_device()->col2im(blobrt::Precision::kFloat32, channels, height, width, kh, kw, ph, pw, sh, sw, 1, 1,
                                   col.gpu_data(), 0, want_back.mutable_gpu_data(), 0);
  for (int i = 0; i < back.count(); ++i) ASSERT_EQ(back.cpu_data()[i], want_back.cpu_data()[i]) << "image element " << i;
}

}  // namespace
