// blobrt-caffe's own GPU methods for Caffe's layers (<blobrt/caffe/portable/layers/>: Pooling,
// ReLU, Sigmoid, TanH, Softmax), as the
// portable build dispatches to them (forward_on_device / backward_on_device, no backend
// having registered the class), on layer classes laid out as Caffe's (layer_param(), and
// PoolingLayer's protected geometry members by Caffe's names), on the device BLOBRT_BACKEND
// picks: each result against a reference written here from Caffe's CPU code (pooling with its
// mask), ties and padding included; what the methods decline (stochastic pooling, a mask top)
// runs the CPU code; and the record says which ran on the device.
#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <blobrt/caffe/portable/gpu_methods.hpp>

namespace caffe {

// Caffe's Layer, as much of it as the methods read.
template <typename Dtype>
class Layer {
 public:
  explicit Layer(const LayerParameter& param) : layer_param_(param) {}
  virtual ~Layer() = default;
  const LayerParameter& layer_param() const { return layer_param_; }

 protected:
  LayerParameter layer_param_;
};

// Caffe's PoolingLayer's members, set as its LayerSetUp and Reshape set them.
template <typename Dtype>
class PoolingLayer : public Layer<Dtype> {
 public:
  PoolingLayer(const LayerParameter& param, int height, int width) : Layer<Dtype>(param) {
    const PoolingParameter& p = param.pooling_param();
    global_pooling_ = p.global_pooling();
    kernel_h_ = global_pooling_ ? height : static_cast<int>(p.kernel_size());
    kernel_w_ = global_pooling_ ? width : static_cast<int>(p.kernel_size());
    stride_h_ = stride_w_ = static_cast<int>(p.stride());
    pad_h_ = pad_w_ = static_cast<int>(p.pad());
    height_ = height;
    width_ = width;
    pooled_height_ = pooled(height_, kernel_h_, stride_h_, pad_h_);
    pooled_width_ = pooled(width_, kernel_w_, stride_w_, pad_w_);
  }
  int pooled_height() const { return pooled_height_; }
  int pooled_width() const { return pooled_width_; }
  int kernel_h() const { return kernel_h_; }
  int stride_h() const { return stride_h_; }
  int pad_h() const { return pad_h_; }

 protected:
  static int pooled(int size, int kernel, int stride, int pad) {
    int out = static_cast<int>(std::ceil(static_cast<float>(size + 2 * pad - kernel) / stride)) + 1;
    if (pad && (out - 1) * stride >= size + pad) --out;
    return out;
  }
  int kernel_h_, kernel_w_, stride_h_, stride_w_, pad_h_, pad_w_, height_, width_, pooled_height_, pooled_width_;
  bool global_pooling_;
};

// Caffe's SoftmaxLayer's members, as its Reshape sets them for `axis`.
template <typename Dtype>
class SoftmaxLayer : public Layer<Dtype> {
 public:
  SoftmaxLayer(const LayerParameter& param, const Blob<Dtype>& bottom, int axis) : Layer<Dtype>(param) {
    softmax_axis_ = axis;
    outer_num_ = bottom.count(0, axis);
    inner_num_ = bottom.count(axis + 1);
  }

 protected:
  int outer_num_, inner_num_, softmax_axis_;
};

template <typename Dtype>
class ReLULayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class SigmoidLayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class TanHLayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};

}  // namespace caffe

// What the portable build's generated source of each layer's .cu includes.
#include <blobrt/caffe/portable/layers/pooling_layer.hpp>
#include <blobrt/caffe/portable/layers/relu_layer.hpp>
#include <blobrt/caffe/portable/layers/sigmoid_layer.hpp>
#include <blobrt/caffe/portable/layers/softmax_layer.hpp>
#include <blobrt/caffe/portable/layers/tanh_layer.hpp>

namespace {

// As Caffe's portable build asks before any device opens (an OpenCL cl_mem is then an address).
const bool addressable = blobrt_caffe_portable::request_addressable_handles();

using caffe::Blob;

template <typename Dtype>
void fill(Blob<Dtype>& blob, unsigned seed, bool halves) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-2, 2);
  Dtype* data = blob.mutable_cpu_data();
  for (int i = 0; i < blob.count(); ++i) {
    const double v = uniform(rng);
    data[i] = static_cast<Dtype>(halves ? std::round(v * 2) / 2 : v);  // halves: many ties
  }
}

template <typename Dtype>
void fill_diff(Blob<Dtype>& blob, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Dtype* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < blob.count(); ++i) diff[i] = static_cast<Dtype>(uniform(rng));
}

template <typename Dtype>
bool forward(const char* layer_class, caffe::Layer<Dtype>& layer, const std::vector<Blob<Dtype>*>& bottom,
             const std::vector<Blob<Dtype>*>& top) {
  return blobrt_caffe_portable::forward_on_device<Dtype>(layer_class, &layer, bottom, top);
}
template <typename Dtype>
bool backward(const char* layer_class, caffe::Layer<Dtype>& layer, const std::vector<Blob<Dtype>*>& top,
              const std::vector<Blob<Dtype>*>& bottom) {
  return blobrt_caffe_portable::backward_on_device<Dtype>(layer_class, &layer, top, std::vector<bool>{true}, bottom);
}

template <typename Dtype>
class LayerGlue : public ::testing::Test {
 protected:
  static constexpr double kEps = sizeof(Dtype) == 4 ? 1e-6 : 1e-14;

  caffe::LayerParameter pooling(caffe::PoolingParameter::PoolMethod method, int kernel, int stride, int pad,
                                bool global = false) {
    caffe::LayerParameter param;
    caffe::PoolingParameter* p = param.mutable_pooling_param();
    p->set_pool(method);
    p->set_kernel_size(kernel);
    p->set_stride(stride);
    p->set_pad(pad);
    p->set_global_pooling(global);
    return param;
  }

  // Caffe's pooling_layer.cpp Forward_cpu and Backward_cpu (MAX with its mask, AVE), on the
  // host copies: the reference top and bottom diff.
  void reference_pooling(const caffe::PoolingLayer<Dtype>& l, bool max, const Blob<Dtype>& bottom,
                         const Blob<Dtype>& top_diff_blob, std::vector<Dtype>* top, std::vector<Dtype>* bottom_diff) {
    const int planes = bottom.num() * bottom.channels(), height = bottom.height(), width = bottom.width();
    const int ph_n = l.pooled_height(), pw_n = l.pooled_width(), k = l.kernel_h(), s = l.stride_h(), pad = l.pad_h();
    const int kw = l.layer_param().pooling_param().global_pooling() ? width : k;
    const int sw = s, padw = pad;
    top->assign(static_cast<std::size_t>(planes) * ph_n * pw_n, Dtype(0));
    bottom_diff->assign(static_cast<std::size_t>(bottom.count()), Dtype(0));
    const Dtype* in = bottom.cpu_data();
    const Dtype* diff = top_diff_blob.cpu_diff();
    for (int p = 0; p < planes; ++p) {
      for (int ph = 0; ph < ph_n; ++ph) {
        for (int pw = 0; pw < pw_n; ++pw) {
          int hstart = ph * s - pad, wstart = pw * sw - padw;
          int hend = std::min(hstart + k, height + pad), wend = std::min(wstart + kw, width + padw);
          const int pool_size = (hend - hstart) * (wend - wstart);
          hstart = std::max(hstart, 0);
          wstart = std::max(wstart, 0);
          hend = std::min(hend, height);
          wend = std::min(wend, width);
          const int out = (p * ph_n + ph) * pw_n + pw;
          Dtype value = max ? Dtype(-FLT_MAX) : Dtype(0);
          int mask = -1;
          for (int h = hstart; h < hend; ++h) {
            for (int w = wstart; w < wend; ++w) {
              const int index = h * width + w;
              if (max && in[p * height * width + index] > value) {
                value = in[p * height * width + index];
                mask = index;
              }
              if (!max) value += in[p * height * width + index];
            }
          }
          (*top)[out] = max ? value : value / pool_size;
          if (max) {
            if (mask >= 0) (*bottom_diff)[p * height * width + mask] += diff[out];
          } else {
            for (int h = hstart; h < hend; ++h) {
              for (int w = wstart; w < wend; ++w) (*bottom_diff)[p * height * width + h * width + w] += diff[out] / pool_size;
            }
          }
        }
      }
    }
  }

  void expect_near(const Dtype* got, const std::vector<Dtype>& want, const char* what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 8 * kEps * (1 + std::fabs(want[i]))) << what << "[" << i << "]";
    }
  }

  void check_pooling(caffe::PoolingParameter::PoolMethod method, int kernel, int stride, int pad, bool global = false) {
    Blob<Dtype> bottom(2, 3, 7, 9), top;
    fill(bottom, 1, true);
    caffe::PoolingLayer<Dtype> layer(pooling(method, kernel, stride, pad, global), 7, 9);
    top.Reshape(2, 3, layer.pooled_height(), layer.pooled_width());
    const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
    ASSERT_TRUE(forward<Dtype>("PoolingLayer", layer, b, t)) << "ran the CPU code";
    fill_diff(top, 2);
    bottom.mutable_cpu_diff()[0] = Dtype(NAN);  // written over, not added to
    ASSERT_TRUE(backward<Dtype>("PoolingLayer", layer, t, b));
    std::vector<Dtype> want_top, want_diff;
    reference_pooling(layer, method == caffe::PoolingParameter::MAX, bottom, top, &want_top, &want_diff);
    expect_near(top.cpu_data(), want_top, "top");
    expect_near(bottom.cpu_diff(), want_diff, "bottom diff");
  }

  // A neuron layer: forward f(bottom) and backward g(data, top diff) against the formulas of
  // the layer's .cu, out of place and in place.
  template <class Forward, class Backward>
  void check_neuron(const char* layer_class, caffe::Layer<Dtype>& layer, bool backward_reads_top, Forward f,
                    Backward g) {
    for (bool in_place : {false, true}) {
      Blob<Dtype> bottom(2, 3, 4, 5), separate_top(2, 3, 4, 5);
      Blob<Dtype>& top = in_place ? bottom : separate_top;
      fill(bottom, 3, false);
      std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
      const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
      ASSERT_TRUE(forward<Dtype>(layer_class, layer, b, t));
      std::vector<Dtype> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = f(x[i]);
      expect_near(top.cpu_data(), want, "top");
      fill_diff(top, 4);
      std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
      // What the .cu's backward reads: the bottom's data (in place: the top's), or the top's.
      std::vector<Dtype> data(top.cpu_data(), top.cpu_data() + top.count());
      if (!backward_reads_top && !in_place) data = x;
      ASSERT_TRUE(backward<Dtype>(layer_class, layer, t, b));
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = g(data[i], dy[i]);
      expect_near(bottom.cpu_diff(), want, in_place ? "bottom diff (in place)" : "bottom diff");
    }
  }
};

using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LayerGlue, Dtypes);

TYPED_TEST(LayerGlue, MaxPoolingOverlappingAndPaddedWithTies) {
  this->check_pooling(caffe::PoolingParameter::MAX, 3, 2, 1);
  this->check_pooling(caffe::PoolingParameter::MAX, 2, 2, 0);  // LeNet's
}

TYPED_TEST(LayerGlue, AveragePoolingCountsThePadding) {
  this->check_pooling(caffe::PoolingParameter::AVE, 3, 2, 1);
  this->check_pooling(caffe::PoolingParameter::AVE, 3, 1, 0);
}

TYPED_TEST(LayerGlue, GlobalPooling) {
  this->check_pooling(caffe::PoolingParameter::MAX, 1, 1, 0, true);
  this->check_pooling(caffe::PoolingParameter::AVE, 1, 1, 0, true);
}

TYPED_TEST(LayerGlue, PoolingDeclinesWhatOnlyCaffesKernelsDo) {
  using Dtype = TypeParam;
  Blob<Dtype> bottom(1, 1, 4, 4), top(1, 1, 2, 2), mask(1, 1, 2, 2);
  caffe::PoolingLayer<Dtype> stochastic(this->pooling(caffe::PoolingParameter::STOCHASTIC, 2, 2, 0), 4, 4);
  EXPECT_FALSE(forward<Dtype>("PoolingLayer", stochastic, {&bottom}, {&top})) << "stochastic pooling";
  EXPECT_FALSE(backward<Dtype>("PoolingLayer", stochastic, {&top}, {&bottom}));
  caffe::PoolingLayer<Dtype> max(this->pooling(caffe::PoolingParameter::MAX, 2, 2, 0), 4, 4);
  EXPECT_FALSE(forward<Dtype>("PoolingLayer", max, {&bottom}, {&top, &mask})) << "the mask as a second top";
  EXPECT_FALSE(backward<Dtype>("PoolingLayer", max, {&top, &mask}, {&bottom}));
}

// Without padding Caffe's rounding up keeps windows that start past the image (kernel 1,
// stride 2 over 4 x 6: 3 x 4 windows, the last row and column of them empty: -FLT_MAX).
TYPED_TEST(LayerGlue, PoolingKeepsCaffesEmptyLastWindows) {
  using Dtype = TypeParam;
  Blob<Dtype> bottom(1, 2, 4, 6), top;
  fill(bottom, 7, true);
  caffe::PoolingLayer<Dtype> layer(this->pooling(caffe::PoolingParameter::MAX, 1, 2, 0), 4, 6);
  ASSERT_EQ(layer.pooled_height(), 3);
  ASSERT_EQ(layer.pooled_width(), 4);
  top.Reshape(1, 2, layer.pooled_height(), layer.pooled_width());
  ASSERT_TRUE(forward<Dtype>("PoolingLayer", layer, {&bottom}, {&top}));
  EXPECT_EQ(top.data_at(0, 1, 1, 2), bottom.data_at(0, 1, 2, 4));
  EXPECT_EQ(top.data_at(0, 1, 2, 0), Dtype(-FLT_MAX));
  EXPECT_EQ(top.data_at(0, 0, 0, 3), Dtype(-FLT_MAX));
}

TYPED_TEST(LayerGlue, LeakyReLU) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  param.mutable_relu_param()->set_negative_slope(0.125f);
  caffe::ReLULayer<Dtype> layer(param);
  const Dtype slope = Dtype(0.125);
  this->check_neuron(
      "ReLULayer", layer, false, [&](Dtype x) { return x > 0 ? x : x * slope; },
      [&](Dtype x, Dtype dy) { return dy * (Dtype(x > 0) + Dtype(x <= 0) * slope); });
}

TYPED_TEST(LayerGlue, SigmoidAndTanH) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  caffe::SigmoidLayer<Dtype> sigmoid(param);
  this->check_neuron(
      "SigmoidLayer", sigmoid, true, [](Dtype x) { return Dtype(0.5 * std::tanh(0.5 * double(x)) + 0.5); },
      [](Dtype y, Dtype dy) { return dy * y * (1 - y); });
  caffe::TanHLayer<Dtype> tanh_layer(param);
  this->check_neuron(
      "TanHLayer", tanh_layer, true, [](Dtype x) { return std::tanh(x); },
      [](Dtype y, Dtype dy) { return dy * (1 - y * y); });
}

// Softmax over axis 1 of 2 x 5 x 3 x 4 (outer 2, channels 5, inner 12), out of place and in
// place: each position's probabilities and the gradient (dy - dot(dy, y)) y.
TYPED_TEST(LayerGlue, SoftmaxAlongAnAxis) {
  using Dtype = TypeParam;
  for (bool in_place : {false, true}) {
    Blob<Dtype> bottom(2, 5, 3, 4), separate_top(2, 5, 3, 4);
    Blob<Dtype>& top = in_place ? bottom : separate_top;
    fill(bottom, 5, false);
    const std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
    caffe::SoftmaxLayer<Dtype> layer(caffe::LayerParameter(), bottom, 1);
    const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
    ASSERT_TRUE(forward<Dtype>("SoftmaxLayer", layer, b, t));
    std::vector<Dtype> want(x.size());
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 12; ++i) {
        double sum = 0;
        for (int c = 0; c < 5; ++c) sum += std::exp(double(x[(o * 5 + c) * 12 + i]));
        for (int c = 0; c < 5; ++c) want[(o * 5 + c) * 12 + i] = Dtype(std::exp(double(x[(o * 5 + c) * 12 + i])) / sum);
      }
    }
    this->expect_near(top.cpu_data(), want, "probabilities");
    fill_diff(top, 6);
    const std::vector<Dtype> y(top.cpu_data(), top.cpu_data() + top.count());
    const std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
    ASSERT_TRUE(backward<Dtype>("SoftmaxLayer", layer, t, b));
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 12; ++i) {
        double dot = 0;
        for (int c = 0; c < 5; ++c) dot += double(dy[(o * 5 + c) * 12 + i]) * y[(o * 5 + c) * 12 + i];
        for (int c = 0; c < 5; ++c) {
          const int e = (o * 5 + c) * 12 + i;
          want[e] = Dtype((dy[e] - dot) * y[e]);
        }
      }
    }
    this->expect_near(bottom.cpu_diff(), want, in_place ? "bottom diff (in place)" : "bottom diff");
  }
}

// The record says which ran on the device.
TEST(LayerGlueReport, SaysWhatRanOnTheDevice) {
  Blob<float> bottom(1, 1, 4, 4), top(1, 1, 2, 2);
  caffe::LayerParameter param;
  caffe::ReLULayer<float> relu(param);
  ASSERT_TRUE(forward<float>("ReLULayer", relu, {&bottom}, {&bottom}));
  const std::string device = blobrt::current_device()->description().id();
  const std::vector<std::string> report = blobrt_caffe_portable::gpu_method_report();
  EXPECT_NE(std::find(report.begin(), report.end(), "ReLULayer Forward_gpu on " + device + ": device"), report.end());
  EXPECT_TRUE(addressable);
}

}  // namespace
