// Small layers written in Caffe's Layer style on <blobrt/caffe_compat.hpp> only:
// InnerProduct, ReLU, SoftmaxWithLoss and Convolution (through im2col). Forward_cpu and
// Backward_cpu use the CPU half of Caffe's math on host pointers; InnerProduct also has
// Forward_gpu/Backward_gpu on the active device's handles. Used by examples/caffe_mlp.cpp
// and tests/caffe/caffe_layers_test.cpp (numeric gradient checks).
#ifndef BLOBRT_EXAMPLES_CAFFE_STYLE_LAYERS_HPP
#define BLOBRT_EXAMPLES_CAFFE_STYLE_LAYERS_HPP

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "blobrt/caffe_compat.hpp"

namespace caffe_style {

using caffe::Blob;
using caffe::Caffe;
using std::shared_ptr;
using std::vector;

template <typename Dtype>
class Layer {
 public:
  virtual ~Layer() = default;
  virtual void Reshape(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) = 0;
  void Forward(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
    Reshape(bottom, top);
    if (Caffe::mode() == Caffe::GPU) Forward_gpu(bottom, top); else Forward_cpu(bottom, top);
  }
  void Backward(const vector<Blob<Dtype>*>& top, const vector<bool>& down, const vector<Blob<Dtype>*>& bottom) {
    if (Caffe::mode() == Caffe::GPU) Backward_gpu(top, down, bottom); else Backward_cpu(top, down, bottom);
  }
  vector<shared_ptr<Blob<Dtype> > >& blobs() { return blobs_; }

 protected:
  virtual void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) = 0;
  virtual void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                            const vector<Blob<Dtype>*>& bottom) = 0;
  virtual void Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {
    Forward_cpu(bottom, top);
  }
  virtual void Backward_gpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                            const vector<Blob<Dtype>*>& bottom) {
    Backward_cpu(top, down, bottom);
  }
  vector<shared_ptr<Blob<Dtype> > > blobs_;
};

// top = bottom * W^T + b; W is num_output x K, filled from Caffe's gaussian (std 0.01 * scale).
template <typename Dtype>
class InnerProductLayer : public Layer<Dtype> {
 public:
  InnerProductLayer(int num_output, int K, Dtype weight_std) : N_(num_output), K_(K) {
    this->blobs_.emplace_back(new Blob<Dtype>(vector<int>{N_, K_}));
    this->blobs_.emplace_back(new Blob<Dtype>(vector<int>{N_}));
    caffe::caffe_rng_gaussian<Dtype>(N_ * K_, Dtype(0), weight_std, this->blobs_[0]->mutable_cpu_data());
    caffe::caffe_set<Dtype>(N_, Dtype(0), this->blobs_[1]->mutable_cpu_data());
  }
  void Reshape(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    M_ = bottom[0]->count() / K_;
    top[0]->Reshape(vector<int>{M_, N_});
    bias_multiplier_.Reshape(vector<int>{M_});
    caffe::caffe_set<Dtype>(M_, Dtype(1), bias_multiplier_.mutable_cpu_data());
  }

 protected:
  void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    using namespace caffe;
    caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasTrans, M_, N_, K_, Dtype(1), bottom[0]->cpu_data(),
                          this->blobs_[0]->cpu_data(), Dtype(0), top[0]->mutable_cpu_data());
    caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, M_, N_, 1, Dtype(1), bias_multiplier_.cpu_data(),
                          this->blobs_[1]->cpu_data(), Dtype(1), top[0]->mutable_cpu_data());
  }
  void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                    const vector<Blob<Dtype>*>& bottom) override {
    using namespace caffe;
    const Dtype* top_diff = top[0]->cpu_diff();
    caffe_cpu_gemm<Dtype>(CblasTrans, CblasNoTrans, N_, K_, M_, Dtype(1), top_diff, bottom[0]->cpu_data(), Dtype(1),
                          this->blobs_[0]->mutable_cpu_diff());
    caffe_cpu_gemv<Dtype>(CblasTrans, M_, N_, Dtype(1), top_diff, bias_multiplier_.cpu_data(), Dtype(1),
                          this->blobs_[1]->mutable_cpu_diff());
    if (down[0]) {
      caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, M_, K_, N_, Dtype(1), top_diff, this->blobs_[0]->cpu_data(),
                            Dtype(0), bottom[0]->mutable_cpu_diff());
    }
  }
  void Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    using namespace caffe;
    caffe_gpu_gemm<Dtype>(CblasNoTrans, CblasTrans, M_, N_, K_, Dtype(1), bottom[0]->gpu_data(),
                          this->blobs_[0]->gpu_data(), Dtype(0), top[0]->mutable_gpu_data());
    caffe_gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, M_, N_, 1, Dtype(1), bias_multiplier_.gpu_data(),
                          this->blobs_[1]->gpu_data(), Dtype(1), top[0]->mutable_gpu_data());
  }
  void Backward_gpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                    const vector<Blob<Dtype>*>& bottom) override {
    using namespace caffe;
    const Dtype* top_diff = top[0]->gpu_diff();
    caffe_gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, N_, K_, M_, Dtype(1), top_diff, bottom[0]->gpu_data(), Dtype(1),
                          this->blobs_[0]->mutable_gpu_diff());
    caffe_gpu_gemv<Dtype>(CblasTrans, M_, N_, Dtype(1), top_diff, bias_multiplier_.gpu_data(), Dtype(1),
                          this->blobs_[1]->mutable_gpu_diff());
    if (down[0]) {
      caffe_gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, M_, K_, N_, Dtype(1), top_diff, this->blobs_[0]->gpu_data(),
                            Dtype(0), bottom[0]->mutable_gpu_diff());
    }
  }

 private:
  int M_ = 0, N_, K_;
  Blob<Dtype> bias_multiplier_;
};

template <typename Dtype>
class ReLULayer : public Layer<Dtype> {
 public:
  void Reshape(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    top[0]->ReshapeLike(*bottom[0]);
  }

 protected:
  void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    const Dtype* x = bottom[0]->cpu_data();
    Dtype* y = top[0]->mutable_cpu_data();
    for (int i = 0; i < bottom[0]->count(); ++i) y[i] = std::max(x[i], Dtype(0));
  }
  void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                    const vector<Blob<Dtype>*>& bottom) override {
    if (!down[0]) return;
    const Dtype* x = bottom[0]->cpu_data();
    const Dtype* dy = top[0]->cpu_diff();
    Dtype* dx = bottom[0]->mutable_cpu_diff();
    for (int i = 0; i < bottom[0]->count(); ++i) dx[i] = x[i] > 0 ? dy[i] : Dtype(0);
  }
};

// bottom[0]: scores N x C, bottom[1]: labels N; top[0]: the mean cross-entropy (a scalar
// whose diff is the loss weight, as in Caffe).
template <typename Dtype>
class SoftmaxWithLossLayer : public Layer<Dtype> {
 public:
  void Reshape(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    top[0]->Reshape(vector<int>{});
    prob_.ReshapeLike(*bottom[0]);
  }
  const Blob<Dtype>& prob() const { return prob_; }

 protected:
  void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    const int n = bottom[0]->shape(0), c = bottom[0]->count() / n;
    const Dtype* s = bottom[0]->cpu_data();
    const Dtype* label = bottom[1]->cpu_data();
    Dtype* p = prob_.mutable_cpu_data();
    Dtype loss = 0;
    for (int i = 0; i < n; ++i) {
      const Dtype top_score = *std::max_element(s + i * c, s + (i + 1) * c);
      for (int j = 0; j < c; ++j) p[i * c + j] = s[i * c + j] - top_score;
      caffe::caffe_exp<Dtype>(c, p + i * c, p + i * c);
      caffe::caffe_scal<Dtype>(c, Dtype(1) / caffe::caffe_cpu_asum<Dtype>(c, p + i * c), p + i * c);
      loss -= std::log(std::max(p[i * c + static_cast<int>(label[i])], Dtype(FLT_MIN)));
    }
    top[0]->mutable_cpu_data()[0] = loss / n;
  }
  void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                    const vector<Blob<Dtype>*>& bottom) override {
    if (!down[0]) return;
    const int n = bottom[0]->shape(0), c = bottom[0]->count() / n;
    Dtype* d = bottom[0]->mutable_cpu_diff();
    caffe::caffe_copy(prob_.count(), prob_.cpu_data(), d);
    const Dtype* label = bottom[1]->cpu_data();
    for (int i = 0; i < n; ++i) d[i * c + static_cast<int>(label[i])] -= 1;
    caffe::caffe_scal<Dtype>(prob_.count(), top[0]->cpu_diff()[0] / n, d);
  }

 private:
  Blob<Dtype> prob_;
};

// Caffe's im2col / col2im for one image (C x H x W), square kernel, stride 1, zero pad.
template <typename Dtype>
void im2col(const Dtype* im, int C, int H, int W, int k, int pad, Dtype* col) {
  const int Ho = H + 2 * pad - k + 1, Wo = W + 2 * pad - k + 1;
  for (int c = 0; c < C; ++c)
    for (int ki = 0; ki < k; ++ki)
      for (int kj = 0; kj < k; ++kj)
        for (int y = 0; y < Ho; ++y)
          for (int x = 0; x < Wo; ++x) {
            const int iy = y + ki - pad, ix = x + kj - pad;
            *col++ = iy >= 0 && iy < H && ix >= 0 && ix < W ? im[(c * H + iy) * W + ix] : Dtype(0);
          }
}
template <typename Dtype>
void col2im(const Dtype* col, int C, int H, int W, int k, int pad, Dtype* im) {
  const int Ho = H + 2 * pad - k + 1, Wo = W + 2 * pad - k + 1;
  caffe::caffe_set<Dtype>(C * H * W, Dtype(0), im);
  for (int c = 0; c < C; ++c)
    for (int ki = 0; ki < k; ++ki)
      for (int kj = 0; kj < k; ++kj)
        for (int y = 0; y < Ho; ++y)
          for (int x = 0; x < Wo; ++x, ++col) {
            const int iy = y + ki - pad, ix = x + kj - pad;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W) im[(c * H + iy) * W + ix] += *col;
          }
}

// Convolution as Caffe's BaseConvolutionLayer does it: per image, im2col then one gemm
// with the O x (C k k) weights (offset host pointers into the batch), plus the bias.
template <typename Dtype>
class ConvolutionLayer : public Layer<Dtype> {
 public:
  ConvolutionLayer(int num_output, int channels, int kernel, int pad, Dtype weight_std)
      : O_(num_output), C_(channels), k_(kernel), pad_(pad) {
    this->blobs_.emplace_back(new Blob<Dtype>(vector<int>{O_, C_, k_, k_}));
    this->blobs_.emplace_back(new Blob<Dtype>(vector<int>{O_}));
    caffe::caffe_rng_gaussian<Dtype>(this->blobs_[0]->count(), Dtype(0), weight_std,
                                     this->blobs_[0]->mutable_cpu_data());
    caffe::caffe_rng_uniform<Dtype>(O_, Dtype(-0.1), Dtype(0.1), this->blobs_[1]->mutable_cpu_data());
  }
  void Reshape(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    N_ = bottom[0]->shape(0);
    H_ = bottom[0]->shape(2);
    W_ = bottom[0]->shape(3);
    Ho_ = H_ + 2 * pad_ - k_ + 1;
    Wo_ = W_ + 2 * pad_ - k_ + 1;
    top[0]->Reshape(vector<int>{N_, O_, Ho_, Wo_});
    col_.Reshape(vector<int>{C_ * k_ * k_, Ho_ * Wo_});
    ones_.Reshape(vector<int>{Ho_ * Wo_});
    caffe::caffe_set<Dtype>(Ho_ * Wo_, Dtype(1), ones_.mutable_cpu_data());
  }

 protected:
  void Forward_cpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) override {
    using namespace caffe;
    const int K = C_ * k_ * k_, P = Ho_ * Wo_;
    for (int n = 0; n < N_; ++n) {
      im2col(bottom[0]->cpu_data() + bottom[0]->offset(n), C_, H_, W_, k_, pad_, col_.mutable_cpu_data());
      Dtype* out = top[0]->mutable_cpu_data() + top[0]->offset(n);
      caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, O_, P, K, Dtype(1), this->blobs_[0]->cpu_data(),
                            col_.cpu_data(), Dtype(0), out);
      caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, O_, P, 1, Dtype(1), this->blobs_[1]->cpu_data(),
                            ones_.cpu_data(), Dtype(1), out);
    }
  }
  void Backward_cpu(const vector<Blob<Dtype>*>& top, const vector<bool>& down,
                    const vector<Blob<Dtype>*>& bottom) override {
    using namespace caffe;
    const int K = C_ * k_ * k_, P = Ho_ * Wo_;
    for (int n = 0; n < N_; ++n) {
      const Dtype* dy = top[0]->cpu_diff() + top[0]->offset(n);
      caffe_cpu_gemv<Dtype>(CblasNoTrans, O_, P, Dtype(1), dy, ones_.cpu_data(), Dtype(1),
                            this->blobs_[1]->mutable_cpu_diff());
      im2col(bottom[0]->cpu_data() + bottom[0]->offset(n), C_, H_, W_, k_, pad_, col_.mutable_cpu_data());
      caffe_cpu_gemm<Dtype>(CblasNoTrans, CblasTrans, O_, K, P, Dtype(1), dy, col_.cpu_data(), Dtype(1),
                            this->blobs_[0]->mutable_cpu_diff());
      if (down[0]) {
        caffe_cpu_gemm<Dtype>(CblasTrans, CblasNoTrans, K, P, O_, Dtype(1), this->blobs_[0]->cpu_data(), dy,
                              Dtype(0), col_.mutable_cpu_diff());
        col2im(col_.cpu_diff(), C_, H_, W_, k_, pad_, bottom[0]->mutable_cpu_diff() + bottom[0]->offset(n));
      }
    }
  }

 private:
  int O_, C_, k_, pad_, N_ = 0, H_ = 0, W_ = 0, Ho_ = 0, Wo_ = 0;
  Blob<Dtype> col_, ones_;
};

}  // namespace caffe_style

#endif  // BLOBRT_EXAMPLES_CAFFE_STYLE_LAYERS_HPP
