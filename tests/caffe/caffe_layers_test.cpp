// Layers written in Caffe's style on the compat API (examples/caffe_style/layers.hpp):
// numeric gradient checks in double, in CPU mode and in GPU mode on every device.
#include <gtest/gtest.h>

#include "backend_param.hpp"
#include "caffe_style/layers.hpp"

#include <functional>
#include <string>

namespace {

using caffe::Blob;
using caffe::Caffe;
using namespace caffe_style;
using std::vector;

// f = sum(top * r) for fixed r (or the loss itself); checks d f / d every input and param.
void check_gradient(Layer<double>& layer, const vector<Blob<double>*>& bottom, const vector<Blob<double>*>& top,
                    bool loss, int checked_bottoms = 1) {
  Blob<double> r;
  auto objective = [&]() {
    layer.Forward(bottom, top);
    if (loss) return top[0]->cpu_data()[0];
    return caffe::caffe_cpu_dot<double>(top[0]->count(), top[0]->cpu_data(), r.cpu_data());
  };
  layer.Forward(bottom, top);
  r.ReshapeLike(*top[0]);
  caffe::caffe_rng_uniform<double>(r.count(), -1, 1, r.mutable_cpu_data());
  if (loss) {
    top[0]->mutable_cpu_diff()[0] = 1;
  } else {
    caffe::caffe_copy(r.count(), r.cpu_data(), top[0]->mutable_cpu_diff());
  }
  for (auto& p : layer.blobs()) caffe::caffe_set<double>(p->count(), 0, p->mutable_cpu_diff());
  layer.Backward(top, vector<bool>(bottom.size(), true), bottom);
  vector<Blob<double>*> checked(bottom.begin(), bottom.begin() + checked_bottoms);
  for (auto& p : layer.blobs()) checked.push_back(p.get());
  for (Blob<double>* b : checked) {
    const vector<double> analytic(b->cpu_diff(), b->cpu_diff() + b->count());
    for (int i = 0; i < b->count(); ++i) {
      const double x = b->cpu_data()[i], h = 1e-5;
      b->mutable_cpu_data()[i] = x + h;
      const double up = objective();
      b->mutable_cpu_data()[i] = x - h;
      const double down = objective();
      b->mutable_cpu_data()[i] = x;
      EXPECT_NEAR(analytic[i], (up - down) / (2 * h), 1e-6 * (1 + std::fabs(analytic[i])))
          << b->shape_string() << " element " << i;
    }
  }
}

class CaffeLayersOnDevice : public blobrt::testing::OnEveryDevice {
 protected:
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
  void fill(Blob<double>& b, double lo, double hi) {
    caffe::caffe_rng_uniform<double>(b.count(), lo, hi, b.mutable_cpu_data());
  }
};

TEST_P(CaffeLayersOnDevice, InnerProductCpuAndGpuModes) {
  for (auto mode : {Caffe::CPU, Caffe::GPU}) {
    Caffe::set_random_seed(1);
    Caffe::set_mode(mode);
    InnerProductLayer<double> layer(3, 5, 0.5);
    Blob<double> x(vector<int>{4, 5}), y;
    fill(x, -1, 1);
    check_gradient(layer, {&x}, {&y}, false);
  }
}

TEST_P(CaffeLayersOnDevice, ReLU) {
  Caffe::set_random_seed(2);
  ReLULayer<double> layer;
  Blob<double> x(vector<int>{2, 7}), y;
  fill(x, 0.1, 1);
  double* d = x.mutable_cpu_data();
  for (int i = 0; i < 14; i += 2) d[i] = -d[i];  // away from the kink
  check_gradient(layer, {&x}, {&y}, false);
  EXPECT_EQ(y.cpu_data()[0], 0);
}

TEST_P(CaffeLayersOnDevice, SoftmaxWithLoss) {
  Caffe::set_random_seed(3);
  SoftmaxWithLossLayer<double> layer;
  Blob<double> scores(vector<int>{4, 6}), labels(vector<int>{4}), loss;
  fill(scores, -2, 2);
  for (int i = 0; i < 4; ++i) labels.mutable_cpu_data()[i] = (i * 5) % 6;
  check_gradient(layer, {&scores, &labels}, {&loss}, true);
  EXPECT_GT(loss.cpu_data()[0], 0);
}

TEST_P(CaffeLayersOnDevice, ConvolutionThroughIm2col) {
  Caffe::set_random_seed(4);
  ConvolutionLayer<double> layer(2, 3, 3, 1, 0.3);
  Blob<double> x(vector<int>{2, 3, 4, 5}), y;
  fill(x, -1, 1);
  check_gradient(layer, {&x}, {&y}, false);
  EXPECT_EQ(y.shape_string(), "2 2 4 5 (80)");
}

INSTANTIATE_ON_EVERY_DEVICE(CaffeLayersOnDevice);

}  // namespace
